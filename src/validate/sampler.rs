//! Sampler descriptions: an anisotropy clamp of 0, or above 1 without
//! linear min, mag and mipmap filters or on an adapter without anisotropic
//! filtering (`InvalidAnisotropy`); then a LOD clamp that is not
//! `0 <= start <= end` (`InvalidLodClamp`, NaN included).

use crate::{SamplerDescriptor, SamplerError};

/// Checks a sampler description; `anisotropy` says whether the adapter
/// filters anisotropically at all.
pub(crate) fn check_sampler(
    desc: &SamplerDescriptor,
    anisotropy: bool,
) -> Result<(), SamplerError> {
    let all_linear = desc.mag_filter == wgt::FilterMode::Linear
        && desc.min_filter == wgt::FilterMode::Linear
        && desc.mipmap_filter == wgt::MipmapFilterMode::Linear;
    let aniso = desc.anisotropy_clamp;
    if aniso == 0 || (aniso > 1 && !(all_linear && anisotropy)) {
        return Err(SamplerError::InvalidAnisotropy(aniso));
    }
    // WebGPU's rule: 0 <= start <= end (equal bounds are allowed). Written
    // so that NaN fails too.
    let (start, end) = (desc.lod_clamp.start, desc.lod_clamp.end);
    if !(start >= 0.0 && end >= start) {
        return Err(SamplerError::InvalidLodClamp {
            start_bits: start.to_bits(),
            end_bits: end.to_bits(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lod_clamp_message_prints_the_bounds() {
        let desc = SamplerDescriptor {
            lod_clamp: 2.5..1.0,
            ..Default::default()
        };
        let e = check_sampler(&desc, true).unwrap_err();
        assert_eq!(
            e,
            SamplerError::InvalidLodClamp {
                start_bits: 2.5f32.to_bits(),
                end_bits: 1.0f32.to_bits(),
            }
        );
        assert!(e.to_string().contains("2.5..1"), "{e}");
        let nan = SamplerDescriptor {
            lod_clamp: f32::NAN..1.0,
            ..Default::default()
        };
        assert!(check_sampler(&nan, true)
            .unwrap_err()
            .to_string()
            .contains("NaN"));
    }

    #[test]
    fn anisotropy_needs_linear_filters_and_the_adapter() {
        let linear = SamplerDescriptor {
            anisotropy_clamp: 4,
            mag_filter: wgt::FilterMode::Linear,
            min_filter: wgt::FilterMode::Linear,
            mipmap_filter: wgt::MipmapFilterMode::Linear,
            ..Default::default()
        };
        assert_eq!(check_sampler(&linear, true), Ok(()));
        assert_eq!(
            check_sampler(&linear, false),
            Err(SamplerError::InvalidAnisotropy(4))
        );
    }
}
