"""Arrays of the user's own function (`precompute(extra=)`, `Cache.add`): stored beside the
shards, read zero-copy, batched with their lengths; a failing function names the item and
leaves the cache readable."""

from __future__ import annotations

import json
import shutil
import struct

import numpy as np
import pytest

import gpufeed

from test_cache_features import read_wav


def codec(item_id: str, audio: np.ndarray, sr: int) -> dict[str, np.ndarray]:
    """A stand-in for a neural codec and a speaker encoder: int64 codes of 8 per 320
    samples, a float32 embedding of 4, and a bool flag."""
    frames = audio[: len(audio) // 320 * 320].reshape(-1, 320)
    codes = (np.abs(frames[:, :8]) * 1000).astype(np.int64)
    emb = np.array([audio.mean(), audio.std(), np.abs(audio).max(), sr], dtype=np.float32)
    return {"codes": codes, "spk": emb, "loud": np.bool_(np.abs(audio).max() > 0.5)}


@pytest.fixture()
def lj_copy(lj_dir, tmp_path):
    d = tmp_path / "lj"
    shutil.copytree(lj_dir, d)
    return d


def test_precompute_extra_adds_every_array_and_reuses_them(lj_copy, tmp_path):
    cache = gpufeed.precompute(lj_copy, cache=tmp_path / "c", extra=codec, jobs=2)
    assert cache.report["extra"]["computed"] == ["codes", "spk", "loud"]
    specs = {a["name"]: a for a in cache.arrays}
    assert specs["codes"]["dtype"] == "int64" and specs["codes"]["width"] == 8
    assert specs["codes"]["rows_per_frame"] == 0
    assert specs["spk"]["dtype"] == "float32" and specs["loud"]["dtype"] == "bool"
    longest = 0
    for i in range(len(cache)):
        item = cache[i]
        audio, sr = read_wav(lj_copy / "wavs" / f"{item['id']}.wav")
        assert sr == 22050
        want = codec(item["id"], audio.astype(np.float32), sr)
        np.testing.assert_array_equal(item["codes"], want["codes"])
        assert not item["codes"].flags.writeable, "a read-only view of the mapping"
        # A 1-D array comes back 1-D; a 0-D one as one row.
        np.testing.assert_allclose(item["spk"], want["spk"], rtol=1e-6)
        assert item["loud"].shape == (1,) and item["loud"][0] == want["loud"]
        longest = max(longest, len(want["codes"]))
    assert specs["codes"]["max_rows"] == longest

    # Again: the cache and its arrays are reused; the function runs once, to learn them.
    calls = []

    def counted(i, a, sr):
        calls.append(i)
        return codec(i, a, sr)

    again = gpufeed.precompute(lj_copy, cache=tmp_path / "c", extra=counted)
    assert again.report["was_complete"]
    assert again.report["extra"]["kept"] == ["codes", "spk", "loud"]
    assert len(calls) == 1

    # The loader pads them to the cache's longest under static shapes (every batch one
    # shape), to the batch's longest otherwise, with their lengths.
    for pad in ("static", "longest"):
        loader = gpufeed.Loader(again, batch_size=3, shuffle=False, pad=pad)
        for batch in loader:
            codes, lengths = batch["codes"], batch["codes_lengths"]
            assert codes.dtype == np.int64 and codes.shape[2] == 8
            assert codes.shape[1] == (longest if pad == "static" else lengths.max())
            check_batch(again, codes, lengths, batch["items"])


def check_batch(cache, codes, lengths, items) -> None:
    for r, i in enumerate(items):
        if i < 0:
            continue
        n = lengths[r]
        np.testing.assert_array_equal(codes[r, :n], cache[int(i)]["codes"])
        assert (codes[r, n:] == 0).all()



def test_cache_add_then_a_failing_function_names_the_item(lj_copy, tmp_path):
    cache = gpufeed.precompute(lj_copy, cache=tmp_path / "c")
    assert cache.arrays == []
    r = cache.add("pitch_mean", lambda i, a, sr: np.float32(np.abs(a).mean()))
    assert r["computed"] == ["pitch_mean"] and r["items"] == len(cache)
    # The same object serves the new array.
    assert cache[0]["pitch_mean"].dtype == np.float32
    assert gpufeed.Cache(cache.path)[0]["pitch_mean"].shape == (1,)
    with pytest.raises(ValueError, match="already holds `pitch_mean`"):
        cache.add("pitch_mean", lambda i, a, sr: np.zeros(1))
    cache.add("pitch_mean", lambda i, a, sr: np.zeros(2, np.float64), replace=True)
    assert cache[0]["pitch_mean"].tolist() == [0.0, 0.0]

    manifest = (cache.path / "manifest.json").read_bytes()
    bad_id = cache.ids[3]

    def flaky(i, a, sr):
        if i == bad_id:
            raise RuntimeError("CUDA out of memory")
        return np.ones(3, np.int32)

    with pytest.raises(ValueError) as e:
        cache.add("emb", flaky, jobs=2)
    msg = str(e.value)
    assert bad_id in msg and "RuntimeError: CUDA out of memory" in msg and "test_user_arrays.py" in msg
    assert isinstance(e.value.__cause__, RuntimeError), "the function's exception is the cause"
    assert (cache.path / "manifest.json").read_bytes() == manifest
    reopened = gpufeed.Cache(cache.path)
    reopened.verify()
    assert [a["name"] for a in reopened.arrays] == ["pitch_mean"]

    # What a cache cannot hold is named with the fix.
    with pytest.raises(ValueError, match=r"`x`: shape \[2, 2, 2\].*reshape"):
        cache.add("x", lambda i, a, sr: np.zeros((2, 2, 2)))
    with pytest.raises(ValueError, match="dtype complex128 cannot be cached"):
        cache.add("x", lambda i, a, sr: np.zeros(2, np.complex128))
    with pytest.raises(ValueError, match="returned a dict"):
        cache.add("x", lambda i, a, sr: {"x": np.zeros(2)})
    with pytest.raises(ValueError, match="not a usable array name"):
        cache.add("my codes", lambda i, a, sr: np.zeros(2))
    with pytest.raises(ValueError, match="one of the cache's own names"):
        cache.add("wav", lambda i, a, sr: np.zeros(2))
    with pytest.raises(ValueError, match="not a dict"):
        gpufeed.precompute(lj_copy, cache=tmp_path / "c", extra=lambda i, a, sr: np.zeros(2))


def test_user_arrays_are_plain_safetensors_beside_the_shards(lj_copy, tmp_path):
    cache = gpufeed.precompute(lj_copy, cache=tmp_path / "c", extra=codec)
    manifest = json.loads((cache.path / "manifest.json").read_text())
    entry = next(u for u in manifest["user_arrays"] if u["spec"]["name"] == "codes")
    raw = (cache.path / entry["shards"][0]["file"]).read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + n])
    body = raw[8 + n :]

    def tensor(name: str, dtype: type) -> np.ndarray:
        a, b = header[name]["data_offsets"]
        return np.frombuffer(body[a:b], dtype=dtype).reshape(header[name]["shape"])

    assert header["codes"]["dtype"] == "I64"
    o = tensor("codes_offsets", np.int64)
    np.testing.assert_array_equal(tensor("codes", np.int64)[o[1] : o[2]], cache[1]["codes"])


def test_tf_dataset_carries_user_arrays_with_static_shapes(lj_copy, tmp_path):
    tf = pytest.importorskip("tensorflow")
    import gpufeed.tf

    cache = gpufeed.precompute(lj_copy, cache=tmp_path / "c", extra=codec)
    longest = next(a["max_rows"] for a in cache.arrays if a["name"] == "codes")
    loader = gpufeed.Loader(cache, batch_size=2, shuffle=False, pad="static", drop_last=True)
    spec = gpufeed.tf.element_spec(loader)
    assert spec["codes"].shape.as_list() == [2, longest, 8] and spec["codes"].dtype == tf.int64
    assert spec["loud"].dtype == tf.bool
    first = next(iter(gpufeed.tf.dataset(loader)))
    n = int(first["codes_lengths"][0])
    np.testing.assert_array_equal(first["codes"][0, :n].numpy(), cache[0]["codes"])
