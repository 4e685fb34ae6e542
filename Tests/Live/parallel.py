#!/usr/bin/env python3
"""Runs live test scripts side by side (each starts its own private sound server), prints each
one's output whole when it ends, and fails if any failed.

    python3 Tests/Live/parallel.py "python3 Tests/Live/live_watch.py --earshot E" "python3 …"
"""
import shlex, subprocess, sys, time


def main():
    commands = sys.argv[1:]
    if not commands:
        sys.exit("parallel.py: give the commands to run, each as one argument")
    started = time.time()
    running = [(command, subprocess.Popen(shlex.split(command), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
               for command in commands]
    failed = []
    for command, process in running:
        output, _ = process.communicate()
        print(f"==> {command} (exit {process.returncode}, {time.time() - started:.0f} s from the start)")
        print(output, end="" if output.endswith("\n") else "\n")
        if process.returncode != 0:
            failed.append(command)
    if failed:
        sys.exit("failed: " + "; ".join(failed))


if __name__ == "__main__":
    main()
