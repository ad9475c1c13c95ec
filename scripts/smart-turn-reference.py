#!/usr/bin/env python3
"""The reference for hearth's Smart Turn v3.2 (src/audio/smart_turn.rs): the model's input
features and its probability, as pipecat computes them, for the audio the Rust tests use.
Writes tests/corpus/smart_turn/features.json, which the tests in src/audio/smart_turn.rs
compare against.

Run it from the repository root, in a venv that has numpy and onnxruntime and nothing else:

    python3 -m venv /tmp/st && /tmp/st/bin/pip install numpy onnxruntime==1.31.1
    pip download --no-deps pipecat-ai==1.14.0 -d /tmp/pc
    unzip -o /tmp/pc/pipecat_ai-1.14.0-py3-none-any.whl 'pipecat/audio/turn/smart_turn/*' -d /tmp/pc
    cargo run --release --no-default-features --example smart_turn -- \
        --write-16k /tmp/kitchen-16k.f32
    /tmp/st/bin/python scripts/smart-turn-reference.py \
        /tmp/pc/pipecat/audio/turn/smart_turn /tmp/kitchen-16k.f32

The first argument is the wheel's smart_turn directory: its _whisper_features.py (the feature
code, numpy only) and data/smart-turn-v3.2-cpu.onnx are used as they are. The second is
../shared/audio/kitchen.wav ("Turn on the kitchen light.", 22.05 kHz) as hearth reads it:
16 kHz mono f32 after its rubato resampler, written by the example, so both sides start from
the same samples (the json records their sha256; the tests check it).

What the cases are (the Rust tests build the same audio):
  kitchen_pause      kitchen.wav + 200 ms of silence: the whole command, at a short pause
  kitchen_cut_pause  its first 0.62 s ("Turn on the", cut in the gap before "kitchen")
                     + 200 ms of silence: a pause in the middle of the request
  synthetic_short    1 s of the synthetic signal below (8 s window padded in front)
  synthetic_long     9.5 s of it (only the last 8 s are seen)
Each case gets the model's probability and its 80 x 800 features summarised: every row's and
column's mean and every STRIDE-th value (row-major), to keep the file small.
"""

import hashlib
import importlib.util
import json
import math
import sys
from pathlib import Path

import numpy as np
import onnxruntime as ort

RATE = 16000
WINDOW = 8 * RATE  # the model sees the last 8 s
PAUSE = RATE // 5  # 200 ms
CUT = 9920  # 0.62 s: after "Turn on the", before the /k/ of "kitchen"
STRIDE = 11
OUT = Path("tests/corpus/smart_turn/features.json")


def synthetic(n):
    """A 220 Hz tone swelling at 3 Hz, a quiet 1870 Hz tone and white noise from a 64-bit LCG
    (src/audio/smart_turn.rs builds the same samples)."""
    state = 0
    out = np.empty(n, dtype=np.float32)
    for i in range(n):
        state = (state * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        noise = (state >> 11) / float(1 << 53) * 2.0 - 1.0
        t = i / RATE
        swell = 0.5 + 0.5 * math.sin(2.0 * math.pi * 3.0 * t)
        v = 0.3 * math.sin(2.0 * math.pi * 220.0 * t) * swell
        v += 0.1 * math.sin(2.0 * math.pi * 1870.0 * t) + 0.05 * noise
        out[i] = v
    return out


def last_window(audio):
    """What pipecat's Smart Turn v3 analyser hands the features: the last 8 s, or the audio
    with zeros in front of it."""
    if len(audio) >= WINDOW:
        return audio[len(audio) - WINDOW :]
    return np.concatenate([np.zeros(WINDOW - len(audio), dtype=np.float32), audio])


def load_features(smart_turn_dir):
    spec = importlib.util.spec_from_file_location(
        "whisper_features", smart_turn_dir / "_whisper_features.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.compute_whisper_log_mel_features


def session(model):
    """The session as pipecat opens it (one thread, sequential, every optimisation)."""
    options = ort.SessionOptions()
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.inter_op_num_threads = 1
    options.intra_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(str(model), sess_options=options)


def summary(features):
    return {
        "stride": STRIDE,
        "values": [round(float(v), 7) for v in features.reshape(-1)[::STRIDE]],
        "row_means": [round(float(v), 9) for v in features.astype(np.float64).mean(axis=1)],
        "col_means": [round(float(v), 9) for v in features.astype(np.float64).mean(axis=0)],
    }


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    smart_turn_dir, kitchen_path = Path(sys.argv[1]), Path(sys.argv[2])
    features_of = load_features(smart_turn_dir)
    model = session(smart_turn_dir / "data" / "smart-turn-v3.2-cpu.onnx")
    raw = kitchen_path.read_bytes()
    kitchen = np.frombuffer(raw, dtype="<f4").astype(np.float32)
    silence = np.zeros(PAUSE, dtype=np.float32)
    cases = {
        "kitchen_pause": np.concatenate([kitchen, silence]),
        "kitchen_cut_pause": np.concatenate([kitchen[:CUT], silence]),
        "synthetic_short": synthetic(RATE),
        "synthetic_long": synthetic(RATE * 19 // 2),
    }
    out = {
        "about": "written by scripts/smart-turn-reference.py (pipecat-ai==1.14.0, onnxruntime "
        + ort.__version__
        + ", numpy "
        + np.__version__
        + "); do not edit",
        "kitchen_16k": {"samples": len(kitchen), "sha256": hashlib.sha256(raw).hexdigest()},
        "pause_samples": PAUSE,
        "cut_samples": CUT,
        "cases": [],
    }
    for name, audio in cases.items():
        features = features_of(last_window(audio), do_normalize=True)
        assert features.shape == (80, 800), features.shape
        p = model.run(None, {"input_features": features[None]})[0].item()
        out["cases"].append({"name": name, "probability": p, "features": summary(features)})
        print(f"{name}: P(complete) = {p:.4f}", file=sys.stderr)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(out, separators=(",", ":")) + "\n")
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes)", file=sys.stderr)


if __name__ == "__main__":
    main()
