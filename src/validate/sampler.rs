//! Sampler descriptions: an anisotropy clamp of 0, or above 1 without
//! linear min, mag and mipmap filters or on an adapter without anisotropic
//! filtering (`InvalidAnisotropy`); then a LOD clamp that is not
//! `0 <= start <= end` (`InvalidLodClamp`, NaN included); then a
//! `ClampToBorder` address mode on a device without its feature
//! (`MissingFeature`): `ADDRESS_MODE_CLAMP_TO_ZERO` for the `Zero` border
//! colour, `ADDRESS_MODE_CLAMP_TO_BORDER` for any other (as `wgpu-types`
//! defines the two features).

use crate::{SamplerDescriptor, SamplerError};

/// Checks a sampler description on a device opened with `features`;
/// `anisotropy` says whether the adapter filters anisotropically at all.
pub(crate) fn check_sampler(
    desc: &SamplerDescriptor,
    anisotropy: bool,
    features: wgt::Features,
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
    if desc
        .address_modes
        .contains(&wgt::AddressMode::ClampToBorder)
    {
        let (what, feature) = match desc.border_color {
            Some(wgt::SamplerBorderColor::Zero) => (
                "ClampToBorder with the Zero border colour",
                wgt::Features::ADDRESS_MODE_CLAMP_TO_ZERO,
            ),
            _ => (
                "ClampToBorder with a border colour other than Zero",
                wgt::Features::ADDRESS_MODE_CLAMP_TO_BORDER,
            ),
        };
        if !features.contains(feature) {
            return Err(SamplerError::MissingFeature { what, feature });
        }
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
        let e = check_sampler(&desc, true, wgt::Features::empty()).unwrap_err();
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
        assert!(check_sampler(&nan, true, wgt::Features::empty())
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
        assert_eq!(check_sampler(&linear, true, wgt::Features::empty()), Ok(()));
        assert_eq!(
            check_sampler(&linear, false, wgt::Features::empty()),
            Err(SamplerError::InvalidAnisotropy(4))
        );
    }

    #[test]
    fn clamp_to_border_needs_the_feature_of_its_border_colour() {
        use wgt::Features as F;
        let border = |color| SamplerDescriptor {
            address_modes: [
                wgt::AddressMode::ClampToEdge,
                wgt::AddressMode::ClampToBorder,
                wgt::AddressMode::Repeat,
            ],
            border_color: color,
            ..Default::default()
        };
        let needs = |desc: &SamplerDescriptor, features| match check_sampler(desc, true, features) {
            Err(SamplerError::MissingFeature { feature, .. }) => Some(feature),
            Ok(()) => None,
            Err(e) => panic!("{e}"),
        };
        let zero = border(Some(wgt::SamplerBorderColor::Zero));
        let white = border(Some(wgt::SamplerBorderColor::OpaqueWhite));
        let default = border(None);
        assert_eq!(
            needs(&zero, F::empty()),
            Some(F::ADDRESS_MODE_CLAMP_TO_ZERO)
        );
        assert_eq!(needs(&zero, F::ADDRESS_MODE_CLAMP_TO_ZERO), None);
        assert_eq!(
            needs(&white, F::ADDRESS_MODE_CLAMP_TO_ZERO),
            Some(F::ADDRESS_MODE_CLAMP_TO_BORDER)
        );
        assert_eq!(needs(&default, F::ADDRESS_MODE_CLAMP_TO_BORDER), None);
        // A border colour without ClampToBorder is never read.
        let unused = SamplerDescriptor {
            border_color: Some(wgt::SamplerBorderColor::Zero),
            ..Default::default()
        };
        assert_eq!(needs(&unused, F::empty()), None);
    }
}
