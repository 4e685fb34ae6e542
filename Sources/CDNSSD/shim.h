#include <dns_sd.h>
