#ifndef EARSHOT_HOST_AUDIO_H
#define EARSHOT_HOST_AUDIO_H

/// Stops ALSA's library from printing its own diagnostics ("underrun occurred") on stderr:
/// Earshot counts and reports glitches itself. A no-op where there is no ALSA.
void earshot_silence_host_audio_diagnostics(void);

#endif
