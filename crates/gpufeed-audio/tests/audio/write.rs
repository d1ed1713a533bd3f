//! Audio files written for tests, in their real on-disk layout: canonical WAV, FLAC of
//! fixed-size frames whose subframes the caller gives (FLAC format specification, RFC 9639:
//! section 8.2 STREAMINFO, 9.1 the frame header, 9.3 the footer), and single Ogg pages
//! (RFC 3533), each with the CRCs its format asks for.
//!
//! Used by the `audio` tests, by `fuzz_regressions.rs` (constant FLAC frames, a
//! decompression bomb) and by the crate's unit tests (`#[path]` modules).

/// A CRC computed most significant bit first, from 0, with no final XOR: FLAC's frame
/// header CRC-8 (`crc(8, 0x07, ..)`) and frame CRC-16 (`crc(16, 0x8005, ..)`), Ogg's page
/// CRC-32 (`crc(32, 0x04C1_1DB7, ..)`).
pub fn crc(bits: u32, poly: u32, data: &[u8]) -> u32 {
    let top = 1u64 << (bits - 1);
    let mask = (1u64 << bits) - 1;
    let c = data.iter().fold(0u64, |mut c, &b| {
        c ^= u64::from(b) << (bits - 8);
        for _ in 0..8 {
            let feedback = if c & top != 0 { u64::from(poly) } else { 0 };
            c = ((c << 1) ^ feedback) & mask;
        }
        c
    });
    c as u32
}

/// A WAV file of one `fmt ` chunk holding `fmt`, then a `data` chunk holding `data`.
fn riff_wave(fmt: &[u8], data: &[u8]) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(b"RIFF");
    b.extend_from_slice(&((4 + 8 + fmt.len() + 8 + data.len()) as u32).to_le_bytes());
    b.extend_from_slice(b"WAVEfmt ");
    b.extend_from_slice(&(fmt.len() as u32).to_le_bytes());
    b.extend_from_slice(fmt);
    b.extend_from_slice(b"data");
    b.extend_from_slice(&(data.len() as u32).to_le_bytes());
    b.extend_from_slice(data);
    b
}

/// The 16 bytes every `fmt ` chunk starts with.
fn fmt_fields(format_tag: u16, channels: u16, rate: u32, bits: u16) -> Vec<u8> {
    let block_align = channels * bits / 8;
    let mut f = Vec::new();
    f.extend_from_slice(&format_tag.to_le_bytes());
    f.extend_from_slice(&channels.to_le_bytes());
    f.extend_from_slice(&rate.to_le_bytes());
    f.extend_from_slice(&(rate * u32::from(block_align)).to_le_bytes());
    f.extend_from_slice(&block_align.to_le_bytes());
    f.extend_from_slice(&bits.to_le_bytes());
    f
}

/// A canonical 44-byte-header WAV file: `fmt ` chunk with `format_tag`, then `data`.
pub fn wav(format_tag: u16, channels: u16, rate: u32, bits: u16, data: &[u8]) -> Vec<u8> {
    riff_wave(&fmt_fields(format_tag, channels, rate, bits), data)
}

/// A `WAVE_FORMAT_EXTENSIBLE` file whose sub-format GUID starts with `sub_tag`.
pub fn wav_extensible(sub_tag: u16, channels: u16, rate: u32, bits: u16, data: &[u8]) -> Vec<u8> {
    let mut fmt = fmt_fields(0xfffe, channels, rate, bits);
    fmt.extend_from_slice(&22u16.to_le_bytes()); // extension size
    fmt.extend_from_slice(&bits.to_le_bytes()); // valid bits per sample
    let mask: u32 = if channels == 1 { 0x4 } else { 0x3 }; // centre, or left + right
    fmt.extend_from_slice(&mask.to_le_bytes());
    // KSDATAFORMAT_SUBTYPE_*: {000000xx-0000-0010-8000-00aa00389b71}
    fmt.extend_from_slice(&u32::from(sub_tag).to_le_bytes());
    fmt.extend_from_slice(&[0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xaa]);
    fmt.extend_from_slice(&[0x00, 0x38, 0x9b, 0x71]);
    riff_wave(&fmt, data)
}

/// One Ogg page, the first of its stream, holding one `packet` (under 255 bytes).
pub fn ogg_page(packet: &[u8]) -> Vec<u8> {
    let mut page = b"OggS".to_vec();
    page.push(0); // version
    page.push(0x02); // beginning of stream
    page.extend_from_slice(&0u64.to_le_bytes()); // granule position
    page.extend_from_slice(&0x5eed_u32.to_le_bytes()); // serial number
    page.extend_from_slice(&0u32.to_le_bytes()); // page sequence number
    page.extend_from_slice(&[0; 4]); // CRC, over the page with this field 0
    page.push(1); // one lacing value
    page.push(packet.len() as u8);
    page.extend_from_slice(packet);
    let crc = crc(32, 0x04C1_1DB7, &page);
    page[22..26].copy_from_slice(&crc.to_le_bytes());
    page
}

/// A 16-bit FLAC file at `rate` Hz with `channels` independent channels, whose frames hold
/// the blocks `frames` gives: each its length in samples (at most `block`, the STREAMINFO
/// block size; only the last may be shorter) and its subframes, one per channel, coded.
/// `total` is the STREAMINFO sample count (0 for unknown).
pub fn flac(
    rate: u32,
    channels: u8,
    block: u16,
    total: u64,
    frames: impl IntoIterator<Item = (u16, Vec<u8>)>,
) -> Vec<u8> {
    let mut f = b"fLaC".to_vec();
    // STREAMINFO, the last metadata block: block sizes, frame sizes unknown, the rate,
    // channels and bits per sample, the sample count, no MD5.
    f.extend_from_slice(&[0x80, 0, 0, 34]);
    f.extend_from_slice(&block.to_be_bytes());
    f.extend_from_slice(&block.to_be_bytes());
    f.extend_from_slice(&[0; 6]);
    let packed = (u64::from(rate) << 44) | (u64::from(channels - 1) << 41) | (15 << 36) | total;
    f.extend_from_slice(&packed.to_be_bytes());
    f.extend_from_slice(&[0; 16]);
    // The frame header's rate code, where the rate has one (else "from STREAMINFO").
    let rate_code = match rate {
        8000 => 4,
        16_000 => 5,
        22_050 => 6,
        44_100 => 9,
        48_000 => 10,
        _ => 0,
    };
    for (i, (len, subframes)) in (0u32..).zip(frames) {
        // Sync, fixed blocks; block size in 16 bits at the end, the rate; independent
        // channels, 16 bits; the frame number in UTF-8's coding (up to 2^16 here).
        let mut frame = vec![0xFF, 0xF8, 0x70 | rate_code, ((channels - 1) << 4) | 0x08];
        frame.extend_from_slice(&match i {
            0..0x80 => vec![i as u8],
            0x80..0x800 => vec![0xC0 | (i >> 6) as u8, 0x80 | (i & 0x3F) as u8],
            _ => vec![
                0xE0 | (i >> 12) as u8,
                0x80 | ((i >> 6) & 0x3F) as u8,
                0x80 | (i & 0x3F) as u8,
            ],
        });
        frame.extend_from_slice(&(len - 1).to_be_bytes());
        frame.push(crc(8, 0x07, &frame) as u8);
        frame.extend_from_slice(&subframes);
        let crc = crc(16, 0x8005, &frame) as u16;
        frame.extend_from_slice(&crc.to_be_bytes());
        f.extend_from_slice(&frame);
    }
    f
}

/// A 16-bit FLAC file of the interleaved `samples` (`channels` of them a frame), in blocks of
/// `block` frames, every subframe VERBATIM: the samples as they are, so the file decodes to
/// exactly them.
pub fn verbatim(rate: u32, channels: u8, block: u16, samples: &[i16]) -> Vec<u8> {
    let ch = usize::from(channels);
    let frames = samples.chunks(usize::from(block) * ch).map(|chunk| {
        let len = chunk.len() / ch;
        let mut subframes = Vec::with_capacity(chunk.len() * 2 + ch);
        for c in 0..ch {
            // Subframe header: padding bit, type 000001 (VERBATIM), no wasted bits.
            subframes.push(0x02);
            for frame in chunk.chunks_exact(ch) {
                subframes.extend_from_slice(&frame[c].to_be_bytes());
            }
        }
        (len as u16, subframes)
    });
    flac(rate, channels, block, (samples.len() / ch) as u64, frames)
}
