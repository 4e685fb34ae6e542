"""Real recordings from Debian's free packages, fetched with `apt-get download` (nothing is
installed): the package is unpacked in a scratch folder and only the asked-for path kept."""
import glob
import os
import shutil
import subprocess
import tempfile


def extract(package, inside, folder):
    """`inside` (a file or a folder of the package) as folder/package/inside, fetched once; a
    clear one-line error where apt cannot fetch it or the package does not hold it."""
    path = os.path.join(folder, package, inside)
    if os.path.exists(path):
        return path
    with tempfile.TemporaryDirectory() as scratch:
        try:
            got = subprocess.run(["apt-get", "download", package], cwd=scratch, capture_output=True, text=True)
        except OSError as error:  # no apt-get on this machine
            raise SystemExit(f"cannot fetch {package}: {error.strerror}: apt-get") from None
        debs = glob.glob(os.path.join(scratch, "*.deb"))
        if got.returncode != 0 or not debs:
            raise SystemExit(f"cannot fetch {package} with apt-get download: {(got.stderr.strip().splitlines() or ['no .deb'])[-1]}")
        unpacked = os.path.join(scratch, "x")
        os.makedirs(unpacked)
        got = subprocess.run(f"dpkg-deb --fsys-tarfile '{debs[0]}' | tar -x -C '{unpacked}' './{inside}'",
                             shell=True, capture_output=True, text=True)
        if got.returncode != 0:
            raise SystemExit(f"{package} does not hold {inside}: {(got.stderr.strip().splitlines() or ['tar failed'])[-1]}")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        part = path + ".part"  # whole or not at all; a folder left by a killed run is cleared first
        if os.path.isdir(part):
            shutil.rmtree(part)
        shutil.move(os.path.join(unpacked, inside), part)
        os.replace(part, path)
    return path
