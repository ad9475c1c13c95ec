"""A satellite's speaker for tests: what it is sent (raw PCM on stdin) is appended to the
file named by argv[1]; the wall-clock time its first bytes came is appended to the file named
by argv[2] (the satellite starts this program anew for each reply)."""
import sys
import time

first = True
with open(sys.argv[1], "ab") as out:
    while True:
        data = sys.stdin.buffer.read1(65536)
        if not data:
            break
        if first:
            with open(sys.argv[2], "a") as f:
                f.write(f"{time.time()}\n")
            first = False
        out.write(data)
        out.flush()
