"""The arrays beside the mel (`features=`): one decode, every array, aligned, readable as
plain safetensors."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest

import gpufeed

from test_cache_features import read_wav


@pytest.fixture(scope="module")
def full_cache(lj_dir, tmp_path_factory) -> gpufeed.Cache:
    return gpufeed.precompute(
        lj_dir,
        cache=tmp_path_factory.mktemp("arrays"),
        features=["mel", "linear", "energy", "f0", "wav"],
    )


def stft_magnitude(x: np.ndarray, n_fft: int = 1024, hop: int = 256) -> np.ndarray:
    """|STFT| of librosa's defaults (periodic Hann, centred, reflect padding), numpy only:
    [frames, n_fft/2 + 1]."""
    padded = np.pad(x.astype(np.float64), n_fft // 2, mode="reflect")
    window = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n_fft) / n_fft)
    frames = 1 + len(x) // hop
    idx = np.arange(n_fft)[None, :] + hop * np.arange(frames)[:, None]
    return np.abs(np.fft.rfft(padded[idx] * window, axis=1))


def test_every_array_has_its_shape_dtype_and_alignment(full_cache, lj_dir):
    assert [a["name"] for a in full_cache.arrays] == ["linear", "energy", "f0", "wav", "voiced"]
    assert full_cache.report["arrays"] == ["mel", "linear", "energy", "f0", "wav"]
    assert full_cache.report["cache_bytes"] > 0
    for i in range(len(full_cache)):
        item = full_cache[i]
        frames = item["mel"].shape[0]
        assert item["linear"].shape == (frames, 513) and item["linear"].dtype == np.float32
        assert item["energy"].shape == (frames,) and item["energy"].dtype == np.float32
        assert item["f0"].shape == (frames,) and item["voiced"].dtype == np.uint8
        assert item["wav"].shape == (frames * 256,) and item["wav"].dtype == np.int16
        assert not item["wav"].flags.writeable, "a read-only view of the mapping"
        # Unvoiced frames have F0 0; voiced ones lie in the searched range (f0_min, f0_max:
        # 65 to 1000 Hz by default), and speech is mostly voiced.
        f0, voiced = item["f0"], item["voiced"].astype(bool)
        assert (f0[~voiced] == 0).all()
        assert voiced.mean() > 0.3 and ((f0[voiced] >= 65) & (f0[voiced] <= 1000)).all()
        # The waveform is the file's 16-bit PCM, then zeros up to frames * hop.
        audio, _ = read_wav(lj_dir / "wavs" / f"{item['id']}.wav")
        pcm = np.round(audio * 32768).astype(np.int16)
        np.testing.assert_array_equal(item["wav"][: len(pcm)], pcm)
        assert (item["wav"][len(pcm):] == 0).all()
        # linear and energy against a numpy STFT of the same audio.
        mag = stft_magnitude(audio)
        np.testing.assert_allclose(item["linear"], mag, rtol=1e-4, atol=1e-6 * mag.max())
        np.testing.assert_allclose(
            item["energy"], np.linalg.norm(mag, axis=1), rtol=1e-4, atol=1e-6
        )


def test_shards_are_plain_safetensors_with_offsets(full_cache):
    """Read a shard with json and numpy only, as any framework could."""
    shard = sorted(full_cache.path.glob("shard-*.safetensors"))[0]
    raw = shard.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + n])
    body = raw[8 + n :]

    def tensor(name: str) -> np.ndarray:
        info = header[name]
        dtype = {"F32": np.float32, "I16": np.int16, "U8": np.uint8, "I64": np.int64, "I32": np.int32}[
            info["dtype"]
        ]
        a, b = info["data_offsets"]
        return np.frombuffer(body[a:b], dtype=dtype).reshape(info["shape"])

    first = full_cache[0]
    for name in ["linear", "energy", "f0", "voiced", "wav"]:
        offsets = tensor(f"{name}_offsets")
        np.testing.assert_array_equal(tensor(name)[offsets[0] : offsets[1]], first[name])


def test_a_feature_set_is_its_own_cache(full_cache, lj_cache):
    assert full_cache.key != lj_cache.key
    assert lj_cache.arrays == []
    assert set(lj_cache[0]) >= {"mel", "tokens"} and "f0" not in lj_cache[0]


def test_unknown_arrays_are_refused_by_name(lj_dir, tmp_path):
    with pytest.raises(ValueError, match="`pitchh` is not an array"):
        gpufeed.precompute(lj_dir, cache=tmp_path, features="mel,pitchh".split(","))
    with pytest.raises(ValueError, match="f0:yin"):
        gpufeed.precompute(lj_dir, cache=tmp_path, features="spectrogram")


def test_loader_batches_carry_every_array_padded_with_lengths(full_cache):
    loader = gpufeed.Loader(full_cache, batch_size=3, workers=1, pad="longest", shuffle=False)
    seen = 0
    for batch in loader:
        rows, frames = batch["mel"].shape[:2]
        assert batch["linear"].shape == (rows, frames, 513)
        assert batch["wav"].shape == (rows, frames * 256) and batch["wav"].dtype == np.int16
        assert batch["voiced"].dtype == np.uint8
        for r, i in enumerate(batch["items"]):
            item = full_cache[int(i)]
            for name in ["linear", "energy", "f0", "voiced", "wav"]:
                n = len(item[name])
                assert batch[f"{name}_lengths"][r] == n
                np.testing.assert_array_equal(batch[name][r, :n], item[name])
                assert not batch[name][r, n:].any(), f"{name}: zero padding"
        seen += rows
    assert seen == len(full_cache)


def test_batches_by_duration_stay_within_the_budget(full_cache):
    # One second of audio per batch at most (87 frames), unless an item is longer alone.
    loader = gpufeed.Loader(full_cache, batch_seconds=12.0, workers=0, world_size=2, rank=1)
    budget = int(np.ceil(12.0 * 22050 / 256))
    total = 0
    for batch in loader:
        rows, frames = batch["mel"].shape[:2]
        assert rows == 1 or rows * frames <= budget
        assert batch["f0"].shape == (rows, frames)
        total += int((batch["items"] >= 0).sum())
    other = gpufeed.Loader(full_cache, batch_frames=budget, workers=0, world_size=2, rank=0)
    assert len(other) == len(loader), "every rank has as many batches"
    with pytest.raises(ValueError, match="pass one"):
        gpufeed.Loader(full_cache, batch_frames=100, batch_seconds=1.0)
    with pytest.raises(ValueError, match="pad='longest'"):
        gpufeed.Loader(full_cache, batch_frames=1000, pad="static")


def test_tf_dataset_carries_the_arrays(full_cache):
    tf = pytest.importorskip("tensorflow")
    from gpufeed.tf import dataset

    loader = gpufeed.Loader(full_cache, batch_size=4, workers=1, pad="static", drop_last=True)
    ds = dataset(loader)
    assert ds.element_spec["wav"].dtype == tf.int16
    assert ds.element_spec["linear"].shape.as_list()[2] == 513
    batch = next(iter(ds))
    assert batch["f0"].shape == batch["mel"].shape[:2]
    assert batch["wav"].shape[1] == batch["mel"].shape[1] * 256


def test_linear_in_half_precision_is_half_the_size(full_cache, lj_dir, tmp_path):
    half = gpufeed.precompute(lj_dir, cache=tmp_path, features=["linear:float16"])
    assert half.arrays[0]["dtype"] == "float16"
    a, b = half[0]["linear"], full_cache[0]["linear"]
    assert a.dtype == np.float16 and a.shape == b.shape
    # IEEE half: 11 significant bits, a relative error under 2^-11 for normal values.
    normal = b >= 2.0**-14
    np.testing.assert_allclose(a[normal].astype(np.float32), b[normal], rtol=2.0**-11)
    batch = next(iter(gpufeed.Loader(half, batch_size=2, workers=0, pad="longest")))
    assert batch["linear"].dtype == np.float16


@pytest.mark.parametrize("precision", ["float16", "bfloat16"])
def test_a_half_precision_mel_is_served_as_stored_and_batched_as_float32(lj_dir, tmp_path, precision):
    exact = gpufeed.precompute(lj_dir, cache=tmp_path / "c")
    half = gpufeed.precompute(lj_dir, cache=tmp_path / "c", features=[f"mel:{precision}"])
    assert half.key != exact.key and half.report["arrays"] == [f"mel:{precision}"]
    bound = {"float16": 2.0**-11, "bfloat16": 2.0**-8}[precision]
    for i in range(len(half)):
        mel = half[i]["mel"]
        if precision == "float16":
            assert mel.dtype == np.float16
        else:
            # numpy has no bfloat16: ml_dtypes' when installed, else the raw 16-bit words.
            assert mel.dtype.name in ("bfloat16", "uint16")
        assert not mel.flags.writeable
        if mel.dtype.name == "uint16":
            mel = (mel.astype(np.uint32) << 16).view(np.float32)
        want = exact[i]["mel"]
        np.testing.assert_allclose(mel.astype(np.float32), want, rtol=bound, atol=0)
    batch = next(iter(gpufeed.Loader(half, batch_size=4, shuffle=False, pad="longest")))
    assert batch["mel"].dtype == np.float32
    for r, i in enumerate(batch["items"]):
        n = batch["mel_lengths"][r]
        got = batch["mel"][r, :n]
        np.testing.assert_allclose(got, exact[int(i)]["mel"], rtol=bound, atol=0)
