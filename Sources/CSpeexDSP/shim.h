#include <speex/speex_echo.h>
#include <speex/speex_preprocess.h>
