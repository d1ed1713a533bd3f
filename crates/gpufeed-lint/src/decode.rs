//! What counts as per-item heavy work for `decode-per-item` and
//! `decode-per-item-few-workers`: audio or image decoding, resampling, and features (STFT,
//! mel, pitch) computed from a waveform. The project pass (`project.rs`) follows calls from
//! `__getitem__`, `collate_fn`s and functions passed to `Dataset.map` to these calls.

/// Calls that decode a file, resample, or compute features from a waveform (canonical
/// names).
pub(super) fn is_decode(name: &str) -> bool {
    const EXACT: &[&str] = &[
        "librosa.load",
        "librosa.core.load",
        "librosa.stft",
        "librosa.core.stft",
        "librosa.resample",
        "librosa.core.resample",
        "librosa.pyin",
        "librosa.yin",
        "soundfile.read",
        "torchaudio.load",
        "torchaudio.functional.resample",
        "torchaudio.functional.spectrogram",
        "torchaudio.functional.melspectrogram",
        "torch.stft",
        "scipy.signal.stft",
        "scipy.signal.resample",
        "scipy.signal.resample_poly",
        "resampy.resample",
        "soxr.resample",
        "audioread.audio_open",
        "pydub.AudioSegment.from_file",
        "pydub.AudioSegment.from_wav",
        "pydub.AudioSegment.from_mp3",
        "pyworld.dio",
        "pyworld.harvest",
        "pyworld.stonemask",
        "PIL.Image.open",
        "cv2.imread",
        "imageio.imread",
        "imageio.v2.imread",
        "imageio.v3.imread",
        "skimage.io.imread",
        "torchvision.io.read_image",
        "torchvision.io.decode_image",
        // Zero-phase and biquad filters: a fixed degradation or band split recomputed per
        // item (eben's `lowpass_biquad` run forwards and backwards); a plain `lfilter`
        // (pre-emphasis) is one cheap pass and is left out.
        "torchaudio.functional.lowpass_biquad",
        "torchaudio.functional.highpass_biquad",
        "torchaudio.functional.bandpass_biquad",
        "torchaudio.functional.bandreject_biquad",
        "torchaudio.functional.equalizer_biquad",
        "torchaudio.functional.filtfilt",
        "scipy.signal.filtfilt",
        "scipy.signal.sosfiltfilt",
    ];
    EXACT.contains(&name)
        || is_phonemizer(name)
        || name.starts_with("librosa.feature.")
        || name.starts_with("librosa.effects.")
        || name.starts_with("torchaudio.compliance.kaldi.")
        || is_transform(name)
}

/// A text front end that turns a transcript into phonemes: `phonemizer.phonemize(text)`, or
/// `phonemize` on a `phonemizer.backend` object (espeak under it; Matcha-TTS', VITS'
/// cleaners). Per item it is the same deterministic work every epoch.
pub(super) fn is_phonemizer(name: &str) -> bool {
    name == "phonemizer.phonemize"
        || (name.starts_with("phonemizer.backend.") && name.ends_with(".phonemize"))
}

/// A call named like a spectrogram or mel feature (`self.stft.mel_spectrogram(wav)`,
/// `mel_spectrogram(...)` from an import outside the linted files, `get_mel`, `wav2mel`,
/// `compute_fbank`): per item, it is the STFT and mel work whatever computes it. Only the
/// last name counts, so `spectrogram_path` or `load_mel` (a read) are not features.
pub(super) fn is_feature_name(name: &str) -> bool {
    let last = name.rsplit('.').next().unwrap_or(name).to_ascii_lowercase();
    let words: Vec<&str> = last.split('_').filter(|w| !w.is_empty()).collect();
    let has = |w: &str| words.contains(&w);
    // `spectrogram_path`, `mel_spec_len`: about a feature, not computing one.
    let about = [
        "path", "paths", "file", "files", "dir", "name", "len", "length", "shape", "size",
    ];
    if words.iter().any(|w| about.contains(w)) {
        return false;
    }
    last.contains("spectrogram")
        || last.contains("melspec")
        || (has("mel") && (has("spec") || has("get") || has("compute") || has("extract")))
        || matches!(
            words.as_slice(),
            ["stft"] | ["istft"] | ["wav2mel"] | ["logmel"]
        )
        || ((has("fbank") || has("mfcc") || has("stft")) && !has("inverse"))
}

/// Calls that decode an image (the work that many loader workers are for).
pub(super) fn is_image_decode(name: &str) -> bool {
    matches!(
        name,
        "PIL.Image.open"
            | "cv2.imread"
            | "cv2.imdecode"
            | "imageio.imread"
            | "imageio.v2.imread"
            | "imageio.v3.imread"
            | "skimage.io.imread"
            | "torchvision.io.read_image"
            | "torchvision.io.decode_image"
            | "torchvision.io.decode_jpeg"
    ) || is_image_folder(name)
}

/// torchvision's datasets that decode an image file per item (`ImageFolder` opens each
/// with PIL); the in-memory ones (`CIFAR10`, `MNIST`) decode nothing.
pub(super) fn is_image_folder(name: &str) -> bool {
    name.strip_prefix("torchvision.datasets.")
        .map(|d| d.rsplit('.').next().unwrap_or(d))
        .is_some_and(|d| matches!(d, "ImageFolder" | "DatasetFolder" | "ImageNet"))
}

/// Calls that start a process (`subprocess-per-item` when reached per item): a sox or
/// ffmpeg conversion run for every item.
pub(super) fn is_subprocess(name: &str) -> bool {
    matches!(
        name,
        "os.system"
            | "os.popen"
            | "subprocess.run"
            | "subprocess.call"
            | "subprocess.check_call"
            | "subprocess.check_output"
            | "subprocess.Popen"
            | "subprocess.getoutput"
            | "subprocess.getstatusoutput"
    )
}

/// A call named like an audio loader (`load_audio`, `load_wav`, `read_audio`,
/// `audio.load`) that is asked for a sample rate (`sr=`, `sample_rate=`, `target_sr=`,
/// `sampling_rate=`): decoding and resampling, whatever library is behind it (NeMo's
/// `AudioSegment`, Coqui's `ap.load_wav`, librosa). Without a rate it may be a plain WAV
/// read, which is not heavy.
pub(super) fn is_resampling_load(name: &str, keywords: &[&str]) -> bool {
    let last = name.rsplit('.').next().unwrap_or(name).to_ascii_lowercase();
    let words: Vec<&str> = last.split('_').collect();
    let loads = words.iter().any(|w| matches!(*w, "load" | "read"))
        && words
            .iter()
            .any(|w| matches!(*w, "audio" | "wav" | "wave" | "waveform"));
    let rate = keywords.iter().any(|k| {
        matches!(
            *k,
            "sr" | "sample_rate" | "sampling_rate" | "target_sr" | "target_sample_rate" | "fs"
        )
    });
    loads && rate
}

/// Calls that draw a random number (canonical names): a resample or filter whose
/// parameters come from one is an augmentation, different every epoch, so it cannot be
/// precomputed.
pub(super) fn is_random(name: &str) -> bool {
    name.starts_with("random.")
        || name.starts_with("numpy.random.")
        || name.starts_with("np.random.")
        || matches!(
            name,
            "torch.rand"
                | "torch.rand_like"
                | "torch.randn"
                | "torch.randn_like"
                | "torch.randint"
                | "torch.randperm"
                | "torch.normal"
                | "torch.bernoulli"
                | "torch.multinomial"
        )
}

/// How much a heavy call costs, to name the heaviest in evidence: features (STFT, mel,
/// pitch) over resampling over decoding.
pub(super) fn weight(name: &str) -> u8 {
    let n = name.to_ascii_lowercase();
    if [
        "stft", "spec", "mel", "mfcc", "fbank", "feature", "pyworld", "yin", "kaldi", "lfcc",
    ]
    .iter()
    .any(|k| n.contains(k))
        || is_phonemizer(name)
    {
        2
    } else if n.contains("resample") || n.contains("biquad") || n.contains("filtfilt") {
        1
    } else {
        0
    }
}

/// Constructors of feature transform objects (calling the object computes the feature):
/// torchaudio's spectrogram, mel, MFCC and resampling modules.
pub(super) fn is_transform(name: &str) -> bool {
    // A phonemizer backend: its `phonemize` method is the work ([`is_phonemizer`]).
    if name.starts_with("phonemizer.backend.") && name.ends_with("Backend") {
        return true;
    }
    name.strip_prefix("torchaudio.transforms.")
        .is_some_and(|t| {
            matches!(
                t,
                "Spectrogram"
                    | "MelSpectrogram"
                    | "MFCC"
                    | "LFCC"
                    | "Resample"
                    | "MelScale"
                    | "InverseMelScale"
                    | "GriffinLim"
                    | "PitchShift"
                    | "SpeedPerturbation"
            )
        })
}

#[cfg(test)]
mod tests {
    use super::super::tests::ids;

    #[test]
    fn getitem_decoding() {
        let bad = "\
import librosa
import soundfile as sf
class Speech:
    def __getitem__(self, i):
        wav, sr = sf.read(self.paths[i])
        return self._mel(wav)
    def _mel(self, wav):
        return librosa.feature.melspectrogram(y=wav)
";
        assert_eq!(
            ids(bad),
            vec![("decode-per-item", 5), ("decode-per-item", 8)]
        );
        let good = "\
import numpy as np
import librosa
class Cached:
    def __getitem__(self, i):
        return np.load(self.paths[i])
def precompute(paths):
    return [librosa.load(p) for p in paths]
";
        assert_eq!(ids(good), vec![]);
    }

    #[test]
    fn feature_names() {
        for yes in [
            "self.stft.mel_spectrogram",
            "mel_spectrogram",
            "audio.melspectrogram",
            "get_mel",
            "compute_mel_spec",
            "spectrogram_torch",
            "stft",
            "wav2mel",
            "extract_fbank",
        ] {
            assert!(super::is_feature_name(yes), "{yes}");
        }
        for no in [
            "spectrogram_path",
            "load_mel",
            "mel_len",
            "np.load",
            "melody",
            "inverse_stft_window",
            "get_mel_files",
        ] {
            assert!(!super::is_feature_name(no), "{no}");
        }
    }

    #[test]
    fn audio_loads_asked_for_a_rate() {
        assert!(super::is_resampling_load("load_audio", &["sample_rate"]));
        assert!(super::is_resampling_load("self.ap.load_wav", &["sr"]));
        assert!(!super::is_resampling_load("load_wav", &[]));
        assert!(!super::is_resampling_load("load_checkpoint", &["sr"]));
    }

    #[test]
    fn mapped_function_decoding() {
        let bad = "\
import tensorflow as tf
import librosa
def load(p):
    return tf.numpy_function(lambda q: librosa.load(q)[0], [p], tf.float32)
ds = tf.data.Dataset.from_tensor_slices(f).map(load, num_parallel_calls=4).batch(2).prefetch(1)
";
        assert_eq!(
            ids(bad),
            vec![("decode-per-item", 4), ("tf-py-function-in-map", 4)]
        );
    }
}
