"""A private PulseAudio in user mode for the live tests: started here, stopped by its pid."""
import os, shutil, signal, subprocess, sys, tempfile, time

RATE = 48_000

# The live path's set-up: a stereo null sink, `probe`, carrying two mono sinks remapped onto its
# channels, `room` (left; its monitor is the microphone) and `headphones` (right).
PROBE_MODULES = [
    f"module-null-sink sink_name=probe channels=2 rate={RATE} channel_map=front-left,front-right",
    "module-remap-sink sink_name=room master=probe channels=1 master_channel_map=front-left channel_map=mono remix=no",
    "module-remap-sink sink_name=headphones master=probe channels=1 master_channel_map=front-right channel_map=mono remix=no",
]


def sh(env, *args, **kw):
    return subprocess.run(args, env=env, check=True, capture_output=True, text=True, **kw).stdout.strip()


class SoundServer:
    """A private PulseAudio with the given modules loaded: started here, stopped by its pid."""

    def __init__(self, modules=PROBE_MODULES):
        self.modules = modules
        self.dir = tempfile.mkdtemp(prefix="earshot-pulse-")
        self.env = dict(os.environ, XDG_RUNTIME_DIR=f"{self.dir}/run", HOME=f"{self.dir}/home",
                        PULSE_RUNTIME_PATH=f"{self.dir}/run/pulse")
        for d in ("run", "home"):
            os.makedirs(f"{self.dir}/{d}", mode=0o700)
        self.pid = None

    def start(self):
        if not shutil.which("pulseaudio"):
            sys.exit("live test: pulseaudio is not installed (make live-deps installs it)")
        loads = [arg for module in self.modules for arg in ("-L", module)]
        subprocess.run(["pulseaudio", "-n", "--daemonize=yes", "--exit-idle-time=-1", "--use-pid-file=yes",
                        "--disallow-exit", f"--log-target=file:{self.dir}/pulse.log",
                        "-L", "module-native-protocol-unix", *loads],
                       env=self.env, check=True, capture_output=True)
        for _ in range(100):
            try:
                self.pid = int(open(f"{self.dir}/run/pulse/pid").read())
                sh(self.env, "pactl", "info")
                return
            except (OSError, ValueError, subprocess.CalledProcessError):
                time.sleep(0.1)
        sys.exit("live test: PulseAudio did not start:\n" + open(f"{self.dir}/pulse.log").read()[-2000:])

    def _end(self, sig):
        """Sends `sig`, waits up to 5 s for the server to go, then kills it."""
        if self.pid:
            try:
                os.kill(self.pid, sig)
                for _ in range(50):
                    os.kill(self.pid, 0)
                    time.sleep(0.1)
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.pid = None

    def crash(self):
        """Kills the server outright, as a crash would; `start` brings it back on the same paths."""
        self._end(signal.SIGKILL)

    def stop(self):
        self._end(signal.SIGTERM)
        shutil.rmtree(self.dir, ignore_errors=True)
