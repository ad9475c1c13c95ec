"""Scores of openWakeWord 0.4.0's own Python code on the 16 kHz test clips, for tests/wake.rs.

Run with the openwakeword==0.4.0 wheel and onnxruntime installed (see README.md):
    python make_reference.py MODELS_DIR OUT_DIR
MODELS_DIR holds the wheel's resources/models (melspectrogram.onnx, embedding_model.onnx,
<name>_v0.1.onnx). Each clip is fed to openwakeword.Model.predict in 1280-sample chunks (the
trailing partial chunk is dropped); one CSV row per chunk: the chunk index, then each model's score.
Each classifier runs in a Model of its own: Model.predict zeroes a class's first 5 scores by
counting them in a buffer that, with several models loaded, fills more than once per call.
"""
import os
import sys

import numpy as np
from openwakeword.model import Model

NAMES = ["alexa", "hey_jarvis", "hey_mycroft"]
CLIPS = ["alexa_16k", "kitchen_16k"]
HERE = os.path.dirname(os.path.abspath(__file__))
RAW = os.path.join(HERE, "..", "..", "..", "crates", "micro-frontend", "tests", "data")


def main(models_dir, out_dir):
    for clip in CLIPS:
        pcm = np.fromfile(os.path.join(RAW, clip + ".raw"), dtype="<i2")
        columns = []
        for name in NAMES:
            model = Model(
                wakeword_model_paths=[os.path.join(models_dir, f"{name}_v0.1.onnx")],
                melspec_onnx_model_path=os.path.join(models_dir, "melspectrogram.onnx"),
                embedding_onnx_model_path=os.path.join(models_dir, "embedding_model.onnx"),
            )
            scores = []
            for i in range(len(pcm) // 1280):
                p = model.predict(pcm[i * 1280:(i + 1) * 1280])
                scores.append(float(p[f"{name}_v0.1"]))
            columns.append(scores)
        with open(os.path.join(out_dir, f"scores_{clip}.csv"), "w") as out:
            out.write("chunk," + ",".join(NAMES) + "\n")
            for i, row in enumerate(zip(*columns)):
                out.write(f"{i}," + ",".join(f"{v:.9g}" for v in row) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
