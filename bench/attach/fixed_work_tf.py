"""The overhead benchmark's TensorFlow target: Keras `fit` on a Python generator whose
every batch costs the same count of pure-Python operations (no clock: a slowdown must
show as fewer steps per second), with the input's GetNext inside Keras's compiled step,
which is where `gpufeed attach` also reads the threads beside the training thread
(docs/attach.md, "Keras"). argv: TRUTH_FILE"""

import os
import pathlib
import sys

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "crates" / "gpufeed-attach" / "tests" / "loops"))
from truth import Truth  # noqa: E402

ITERATIONS = 60_000


def batches():
    while True:
        x = 0.0
        for i in range(ITERATIONS):
            x += i * 0.5
        yield np.full((8, 64), x, np.float32), np.ones((8, 1), np.float32)


class Steps(keras.callbacks.Callback):
    def __init__(self) -> None:
        super().__init__()
        self.truth = Truth()

    def on_train_batch_end(self, batch, logs=None) -> None:
        self.truth.step_done()


def main() -> None:
    inp = keras.Input((64,))
    h = keras.layers.Dense(64, activation="relu")(inp)
    model = keras.Model(inp, keras.layers.Dense(1)(h))
    model.compile("sgd", "mse")
    model.fit(batches(), steps_per_epoch=10**9, epochs=1, verbose=0, callbacks=[Steps()])


main()
