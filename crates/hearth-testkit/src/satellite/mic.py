"""A satellite's microphone for tests: 16 kHz 16-bit mono silence on stdout in real time;
whenever the file named by argv[1] appears, the raw audio file it names is played into the
stream (then the trigger file is removed), and the wall-clock time its last sample went out
is appended to the file named by argv[2] (one line per file played)."""
import os
import sys
import time

trigger = sys.argv[1]
said = sys.argv[2]
chunk = 1024 * 2
out = sys.stdout.buffer
pending = b""
start = time.monotonic()
sent = 0
while True:
    if not pending and os.path.exists(trigger):
        with open(trigger) as f:
            path = f.read().strip()
        os.remove(trigger)
        with open(path, "rb") as f:
            pending = f.read()
    playing = bool(pending)
    piece, pending = pending[:chunk], pending[chunk:]
    out.write(piece + bytes(chunk - len(piece)))
    out.flush()
    if playing and not pending:
        # the chunk went out at once; its last sample is due len/rate after its first
        with open(said, "a") as f:
            f.write(f"{time.time() + len(piece) / 32000}\n")
    sent += chunk
    delay = start + sent / 32000 - time.monotonic()
    if delay > 0:
        time.sleep(delay)
