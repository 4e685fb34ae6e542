#include "host_audio.h"

#if defined(__linux__) && __has_include(<alsa/asoundlib.h>)
#include <alsa/asoundlib.h>

static void ignore(const char *file, int line, const char *function, int err, const char *format, ...) {
    (void)file; (void)line; (void)function; (void)err; (void)format;
}

void earshot_silence_host_audio_diagnostics(void) { snd_lib_error_set_handler(ignore); }
#else
void earshot_silence_host_audio_diagnostics(void) {}
#endif
