#!/usr/bin/env python3
"""Transcribe a WAV file with a Wyoming ASR server, using the `wyoming` package's own client.

Usage: wyoming_client.py HOST PORT WAV [LANGUAGE]

Sends describe (and checks the answer is an info with an asr program), then transcribe,
audio-start, the WAV in 100 ms audio-chunks at its own rate, width and channels, and
audio-stop; prints the transcript's text on stdout. Exits non-zero on an error event or a
closed connection. Needs `pip install wyoming==1.10.2`.
"""

import asyncio
import sys
import wave

from wyoming.asr import Transcribe, Transcript
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.client import AsyncTcpClient
from wyoming.error import Error
from wyoming.info import Describe, Info


async def main() -> int:
    host, port, wav_path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    language = sys.argv[4] if len(sys.argv) > 4 else "en"

    async with AsyncTcpClient(host, port, read_timeout=60) as client:
        await client.write_event(Describe().event())
        event = await client.read_event()
        if event is None or not Info.is_type(event.type):
            print(f"expected info, got {event}", file=sys.stderr)
            return 1
        info = Info.from_event(event)
        names = [program.name for program in info.asr]
        print(f"info: asr programs {names}", file=sys.stderr)

        with wave.open(wav_path, "rb") as wav:
            rate, width, channels = wav.getframerate(), wav.getsampwidth(), wav.getnchannels()
            await client.write_event(Transcribe(language=language).event())
            await client.write_event(AudioStart(rate=rate, width=width, channels=channels).event())
            frames_per_chunk = rate // 10
            timestamp = 0
            while True:
                audio = wav.readframes(frames_per_chunk)
                if not audio:
                    break
                chunk = AudioChunk(rate=rate, width=width, channels=channels, audio=audio,
                                   timestamp=timestamp)
                await client.write_event(chunk.event())
                timestamp += chunk.milliseconds
            await client.write_event(AudioStop(timestamp=timestamp).event())

        while True:
            event = await client.read_event()
            if event is None:
                print("the server closed the connection", file=sys.stderr)
                return 1
            if Transcript.is_type(event.type):
                print(Transcript.from_event(event).text)
                return 0
            if Error.is_type(event.type):
                print(f"error event: {Error.from_event(event)}", file=sys.stderr)
                return 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
