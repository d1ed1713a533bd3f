"""`gpufeed.mel`, `gpufeed.precompute` and `gpufeed.Cache`."""

from __future__ import annotations

import threading
import time
import wave

import numpy as np
import pytest

import gpufeed


def read_wav(path) -> tuple[np.ndarray, int]:
    with wave.open(str(path), "rb") as w:
        assert w.getsampwidth() == 2 and w.getnchannels() == 1
        pcm = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2")
        return pcm.astype(np.float32) / 32768.0, w.getframerate()


def test_mel_equals_the_cache_features(lj_dir, lj_cache):
    # The cache was computed by the Rust pipeline from the same file: same settings, same
    # numbers (librosa-exactness itself is tested in gpufeed-audio against librosa's output).
    item = lj_cache[0]
    audio, sr = read_wav(lj_dir / "wavs" / f"{item['id']}.wav")
    assert sr == 22050
    m = gpufeed.mel(audio, sr)
    assert m.dtype == np.float32
    assert m.shape == item["mel"].shape
    np.testing.assert_array_equal(m, item["mel"])
    # float64 input gives the same features.
    np.testing.assert_allclose(gpufeed.mel(audio.astype(np.float64), sr), m, rtol=0, atol=1e-5)


def test_mel_settings_and_presets():
    t = np.linspace(0, 1, 16000, endpoint=False, dtype=np.float32)
    audio = 0.5 * np.sin(2 * np.pi * 440 * t).astype(np.float32)
    m = gpufeed.mel(audio, 16000, n_mels=40, hop_length=160, n_fft=512, win_length=400, fmax=None)
    assert m.shape == (101, 40)
    lib = gpufeed.mel(audio, 16000, preset="librosa")
    assert lib.shape == (1 + 16000 // 512, 128), "librosa's defaults: hop 512, 128 mels"
    assert lib.min() >= 0.0, "the librosa preset is a power spectrogram, no log"
    # The 440 Hz tone lands in one band: the loudest band is the same in every frame.
    assert len(set(np.argmax(lib[2:-2], axis=1))) == 1


@pytest.mark.parametrize(
    "audio, message",
    [
        (np.zeros((2, 100), np.float32), "one channel"),
        (np.zeros((2, 2, 2), np.float32), "1-D"),
        (np.zeros(100, np.int16), "int16"),
        ([0.0, 0.1], "numpy array"),
    ],
)
def test_mel_bad_audio_says_what_to_do(audio, message):
    with pytest.raises((ValueError, TypeError), match=message):
        gpufeed.mel(audio, 22050)


def test_mel_bad_settings_name_the_setting():
    a = np.zeros(1000, np.float32)
    with pytest.raises(ValueError, match="unknown mel setting `nfft`; known: .*n_fft"):
        gpufeed.mel(a, 22050, nfft=512)
    with pytest.raises(ValueError, match="preset"):
        gpufeed.mel(a, 22050, preset="kaldi")
    with pytest.raises(ValueError, match="sr=0"):
        gpufeed.mel(a, 0)


def test_mel_releases_the_gil():
    audio = np.random.default_rng(0).standard_normal(22050 * 30).astype(np.float32) * 0.1
    ticks = 0
    done = threading.Event()

    def work():
        gpufeed.mel(audio, 22050)
        done.set()

    t = threading.Thread(target=work)
    t.start()
    while not done.is_set():
        ticks += 1
        time.sleep(0.001)
    t.join()
    assert ticks > 5, "the main thread ran while mel computed"


def test_precompute_returns_the_cache_and_reuses_it(lj_dir, tmp_path):
    c = gpufeed.precompute(lj_dir, cache=tmp_path)
    assert isinstance(c, gpufeed.Cache)
    assert c.report["shards_built"] == 1 and not c.report["was_complete"]
    assert len(c) == 8
    again = gpufeed.precompute(lj_dir, cache=tmp_path)
    assert again.report["was_complete"] and again.report["items_computed"] == 0
    assert again.path == c.path
    # Opened directly, from the folder or from the root holding it.
    assert gpufeed.Cache(c.path).key == c.key
    assert len(gpufeed.Cache(tmp_path)) == 8
    assert gpufeed.Cache(tmp_path).report is None


def tiny_dataset(root, clips: int):
    """`clips` clips of 0.1 s in LJSpeech layout: more than a shard's 256, quickly."""
    (root / "wavs").mkdir(parents=True)
    lines = []
    for i in range(clips):
        t = np.arange(2205) / 22050
        pcm = (0.3 * np.sin(2 * np.pi * (200 + i) * t) * 32767).astype("<i2")
        with wave.open(str(root / "wavs" / f"T{i:04d}.wav"), "wb") as w:
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(22050)
            w.writeframes(pcm.tobytes())
        lines.append(f"T{i:04d}|clip number {i}|clip number {i}")
    (root / "metadata.csv").write_text("\n".join(lines) + "\n")
    return root


def test_precompute_bad_input(tmp_path, lj_dir):
    with pytest.raises(FileNotFoundError, match="no such dataset"):
        gpufeed.precompute(tmp_path / "nowhere")
    with pytest.raises(ValueError, match="on_error"):
        gpufeed.precompute(lj_dir, cache=tmp_path, on_error="ignore")
    with pytest.raises(ValueError, match="shard"):
        gpufeed.precompute_shard(lj_dir, cache=tmp_path, shard="3/2")
    with pytest.raises(ValueError, match="jobs=0"):
        gpufeed.precompute(lj_dir, cache=tmp_path, jobs=0)
    with pytest.raises(FileNotFoundError, match="config"):
        gpufeed.precompute(lj_dir, cache=tmp_path, config=tmp_path / "none.yaml")


def test_precompute_reads_a_config_like_the_cli(lj_dir, tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("data:\n  n_mels: 64\n")
    c = gpufeed.precompute(lj_dir, cache=tmp_path / "c", config=cfg)
    assert c.n_mels == 64 and c[0]["mel"].shape[1] == 64
    assert gpufeed.load_config(cfg)["data"]["n_mels"] == 64


def test_cache_items_are_zero_copy_read_only_views(lj_cache):
    item = lj_cache[3]
    again = lj_cache[3]
    assert item["mel"].ctypes.data == again["mel"].ctypes.data, "a view of the mapping, not a copy"
    assert not item["mel"].flags.writeable and not item["tokens"].flags.writeable
    with pytest.raises(ValueError):
        item["mel"][0, 0] = 1.0
    assert item["tokens"].dtype == np.int32
    assert item["id"] == lj_cache.ids[3] and item["text"] == lj_cache.texts[3]
    assert item["text"].strip(), "the transcript is kept"
    assert lj_cache.mel_lengths[3] == item["mel"].shape[0]
    assert lj_cache.token_lengths[3] == item["tokens"].shape[0]
    assert lj_cache[-1]["id"] == lj_cache.ids[-1]
    with pytest.raises(IndexError, match="out of range for a cache of 8"):
        lj_cache[8]
    # The view keeps the cache alive.
    base = item["mel"]
    del item, again
    assert np.isfinite(base).all()
    assert lj_cache.settings["audio"]["n_mels"] == 80
    lj_cache.verify()


def test_cache_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="precompute"):
        gpufeed.Cache(tmp_path / "missing")
    with pytest.raises(FileNotFoundError, match="not a gpufeed cache"):
        gpufeed.Cache(tmp_path)
