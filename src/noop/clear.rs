//! Clear values as texel bytes, for render-pass load ops that clear.
//!
//! Encoded: 8-, 16- and 32-bit unorm/snorm/uint/sint/float colour formats
//! with 1, 2 or 4 channels (sRGB formats encode the colour channels with
//! the sRGB transfer function), `Bgra8Unorm[Srgb]`, `Rgb10a2Unorm`;
//! `Depth16Unorm` and 32-bit float depth; 8-bit stencil. Other formats
//! (packed floats, compressed formats, `Depth24Plus`, which noop stores
//! without a defined byte layout) return `None`, and their clear is skipped.

use arrayvec::ArrayVec;

/// One texel's bytes (at most 16: `Rgba32*`).
pub(crate) type Texel = ArrayVec<u8, 16>;

/// How a format stores each channel.
#[derive(Clone, Copy)]
enum Channel {
    Unorm8,
    Snorm8,
    Uint8,
    Sint8,
    Unorm16,
    Snorm16,
    Uint16,
    Sint16,
    Float16,
    Uint32,
    Sint32,
    Float32,
}

/// The bytes of one texel of colour `format` holding `color`.
pub(crate) fn encode_color(format: wgt::TextureFormat, color: wgt::Color) -> Option<Texel> {
    use wgt::TextureFormat as F;
    use Channel as C;
    let rgba = [color.r, color.g, color.b, color.a];
    let srgb = format.is_srgb();
    let (channels, kind) = match format.remove_srgb_suffix() {
        F::Bgra8Unorm => {
            let bgra = [rgba[2], rgba[1], rgba[0], rgba[3]];
            return Some(channels_bytes(&bgra, C::Unorm8, srgb));
        }
        F::Rgb10a2Unorm => {
            let q = |v: f64, max: f64| (v.clamp(0.0, 1.0) * max).round() as u32;
            let bits = q(rgba[0], 1023.0)
                | (q(rgba[1], 1023.0) << 10)
                | (q(rgba[2], 1023.0) << 20)
                | (q(rgba[3], 3.0) << 30);
            return Some(bits.to_le_bytes().into_iter().collect());
        }
        F::R8Unorm => (1, C::Unorm8),
        F::Rg8Unorm => (2, C::Unorm8),
        F::Rgba8Unorm => (4, C::Unorm8),
        F::R8Snorm => (1, C::Snorm8),
        F::Rg8Snorm => (2, C::Snorm8),
        F::Rgba8Snorm => (4, C::Snorm8),
        F::R8Uint => (1, C::Uint8),
        F::Rg8Uint => (2, C::Uint8),
        F::Rgba8Uint => (4, C::Uint8),
        F::R8Sint => (1, C::Sint8),
        F::Rg8Sint => (2, C::Sint8),
        F::Rgba8Sint => (4, C::Sint8),
        F::R16Unorm => (1, C::Unorm16),
        F::Rg16Unorm => (2, C::Unorm16),
        F::Rgba16Unorm => (4, C::Unorm16),
        F::R16Snorm => (1, C::Snorm16),
        F::Rg16Snorm => (2, C::Snorm16),
        F::Rgba16Snorm => (4, C::Snorm16),
        F::R16Uint => (1, C::Uint16),
        F::Rg16Uint => (2, C::Uint16),
        F::Rgba16Uint => (4, C::Uint16),
        F::R16Sint => (1, C::Sint16),
        F::Rg16Sint => (2, C::Sint16),
        F::Rgba16Sint => (4, C::Sint16),
        F::R16Float => (1, C::Float16),
        F::Rg16Float => (2, C::Float16),
        F::Rgba16Float => (4, C::Float16),
        F::R32Uint => (1, C::Uint32),
        F::Rg32Uint => (2, C::Uint32),
        F::Rgba32Uint => (4, C::Uint32),
        F::R32Sint => (1, C::Sint32),
        F::Rg32Sint => (2, C::Sint32),
        F::Rgba32Sint => (4, C::Sint32),
        F::R32Float => (1, C::Float32),
        F::Rg32Float => (2, C::Float32),
        F::Rgba32Float => (4, C::Float32),
        _ => return None,
    };
    Some(channels_bytes(&rgba[..channels], kind, srgb))
}

/// The bytes of one texel of the depth aspect of `format` holding `depth`.
pub(crate) fn encode_depth(format: wgt::TextureFormat, depth: f32) -> Option<Texel> {
    use wgt::TextureFormat as F;
    let d = f64::from(depth);
    match format {
        F::Depth16Unorm => Some(channels_bytes(&[d], Channel::Unorm16, false)),
        F::Depth32Float | F::Depth32FloatStencil8 => {
            Some(channels_bytes(&[d], Channel::Float32, false))
        }
        _ => None,
    }
}

/// The byte of one stencil texel holding the low 8 bits of `stencil`.
pub(crate) fn encode_stencil(stencil: u32) -> Texel {
    std::iter::once(stencil as u8).collect()
}

fn channels_bytes(values: &[f64], kind: Channel, srgb: bool) -> Texel {
    use Channel as C;
    let mut out = Texel::new();
    for (i, &v) in values.iter().enumerate() {
        // Alpha (the fourth channel) is never sRGB-encoded.
        let v = if srgb && i < 3 { linear_to_srgb(v) } else { v };
        let unorm = |max: f64| (v.clamp(0.0, 1.0) * max).round();
        let snorm = |max: f64| (v.clamp(-1.0, 1.0) * max).round();
        // `as` saturates: out-of-range integer clear values clamp.
        match kind {
            C::Unorm8 => out.push(unorm(255.0) as u8),
            C::Snorm8 => out.push(snorm(127.0) as i8 as u8),
            C::Uint8 => out.push(v as u8),
            C::Sint8 => out.push(v as i8 as u8),
            C::Unorm16 => out.extend((unorm(65535.0) as u16).to_le_bytes()),
            C::Snorm16 => out.extend((snorm(32767.0) as i16).to_le_bytes()),
            C::Uint16 => out.extend((v as u16).to_le_bytes()),
            C::Sint16 => out.extend((v as i16).to_le_bytes()),
            C::Float16 => out.extend(f16_bits(v as f32).to_le_bytes()),
            C::Uint32 => out.extend((v as u32).to_le_bytes()),
            C::Sint32 => out.extend((v as i32).to_le_bytes()),
            C::Float32 => out.extend((v as f32).to_le_bytes()),
        }
    }
    out
}

/// The sRGB transfer function (linear → encoded), on `0..=1`.
fn linear_to_srgb(v: f64) -> f64 {
    let v = v.clamp(0.0, 1.0);
    if v <= 0.003_130_8 {
        v * 12.92
    } else {
        1.055 * v.powf(1.0 / 2.4) - 0.055
    }
}

/// IEEE 754 half-precision bits of `v`, rounded to nearest even.
fn f16_bits(v: f32) -> u16 {
    let x = v.to_bits();
    let sign = ((x >> 16) & 0x8000) as u16;
    let exp = ((x >> 23) & 0xff) as i32;
    let mant = x & 0x7f_ffff;
    if exp == 0xff {
        // Infinity stays infinity; NaN stays a (quiet) NaN.
        return sign | 0x7c00 | if mant != 0 { 0x200 } else { 0 };
    }
    let e = exp - 127 + 15;
    if e >= 0x1f {
        return sign | 0x7c00;
    }
    if e <= 0 {
        // Subnormal half (or zero): shift the implicit bit in, rounding.
        if e < -10 {
            return sign;
        }
        let full = mant | 0x80_0000;
        let shift = (14 - e) as u32;
        let half = full >> shift;
        let rem = full & ((1 << shift) - 1);
        let midpoint = 1 << (shift - 1);
        let round = rem > midpoint || (rem == midpoint && half & 1 == 1);
        return sign | (half + u32::from(round)) as u16;
    }
    let mut h = u32::from(sign) | ((e as u32) << 10) | (mant >> 13);
    let rem = mant & 0x1fff;
    if rem > 0x1000 || (rem == 0x1000 && h & 1 == 1) {
        // A carry into the exponent is the correct rounding too.
        h += 1;
    }
    h as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_floats() {
        assert_eq!(f16_bits(0.0), 0);
        assert_eq!(f16_bits(1.0), 0x3c00);
        assert_eq!(f16_bits(-2.0), 0xc000);
        assert_eq!(f16_bits(0.5), 0x3800);
        assert_eq!(f16_bits(65504.0), 0x7bff);
        assert_eq!(f16_bits(1e6), 0x7c00);
        assert_eq!(f16_bits(5.960_464_5e-8), 0x0001);
    }

    #[test]
    fn colours() {
        let c = wgt::Color {
            r: 1.0,
            g: 0.5,
            b: 0.0,
            a: 1.0,
        };
        let rgba = encode_color(wgt::TextureFormat::Rgba8Unorm, c).expect("test fixture");
        assert_eq!(&rgba[..], &[255, 128, 0, 255]);
        let bgra = encode_color(wgt::TextureFormat::Bgra8UnormSrgb, c).expect("test fixture");
        assert_eq!(&bgra[..], &[0, 188, 255, 255]);
        let depth = encode_depth(wgt::TextureFormat::Depth32Float, 1.0).expect("test fixture");
        assert_eq!(&depth[..], &1.0f32.to_le_bytes());
        assert!(encode_color(wgt::TextureFormat::Rg11b10Ufloat, c).is_none());
    }
}
