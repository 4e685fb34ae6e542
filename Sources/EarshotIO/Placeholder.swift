enum IOPlaceholder {}
