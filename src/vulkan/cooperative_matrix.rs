//! Cooperative matrices (`VK_KHR_cooperative_matrix`): the configurations
//! an adapter offers, as `wgt::CooperativeMatrixProperties`.
//!
//! `EXPERIMENTAL_COOPERATIVE_MATRIX` is advertised where the extension's
//! `cooperativeMatrix` feature, the Vulkan memory model with device scope
//! (naga writes cooperative-matrix SPIR-V under the Vulkan memory model)
//! and at least one configuration listed here are present; the device
//! then enables all three (`adapter.rs`), and naga gets
//! `COOPERATIVE_MATRIX` (`shader.rs`). Listed are the configurations a
//! shader can name: subgroup scope, sizes of 8 or 16, A and B of one
//! scalar type and C and the result of one, each f16, f32, i32 or u32.

use ash::vk;

/// The configurations `pd` offers that shaders can name (see the module
/// docs); empty when the query fails (logged).
///
/// # Safety
/// `pd` was enumerated from `instance`, which has
/// `VK_KHR_cooperative_matrix` among `pd`'s extensions.
pub(super) unsafe fn configurations(
    entry: &ash::Entry,
    instance: &ash::Instance,
    pd: vk::PhysicalDevice,
) -> Vec<wgt::CooperativeMatrixProperties> {
    let fns = ash::khr::cooperative_matrix::Instance::new(entry, instance);
    // SAFETY: forwarded contract.
    match unsafe { fns.get_physical_device_cooperative_matrix_properties(pd) } {
        Ok(all) => all.iter().filter_map(nameable).collect(),
        Err(e) => {
            log::warn!("vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR failed: {e:?}");
            Vec::new()
        }
    }
}

/// One Vulkan configuration as shaders can name it, or `None`.
fn nameable(
    p: &vk::CooperativeMatrixPropertiesKHR<'_>,
) -> Option<wgt::CooperativeMatrixProperties> {
    let size = |s: u32| matches!(s, 8 | 16).then_some(s);
    let ab = scalar(p.a_type).filter(|&t| Some(t) == scalar(p.b_type))?;
    let cr = scalar(p.c_type).filter(|&t| Some(t) == scalar(p.result_type))?;
    (p.scope == vk::ScopeKHR::SUBGROUP).then_some(())?;
    Some(wgt::CooperativeMatrixProperties {
        m_size: size(p.m_size)?,
        n_size: size(p.n_size)?,
        k_size: size(p.k_size)?,
        ab_type: ab,
        cr_type: cr,
        saturating_accumulation: p.saturating_accumulation == vk::TRUE,
    })
}

/// A Vulkan component type as a cooperative scalar type, if shaders have it.
fn scalar(ty: vk::ComponentTypeKHR) -> Option<wgt::CooperativeScalarType> {
    use wgt::CooperativeScalarType as S;
    match ty {
        vk::ComponentTypeKHR::FLOAT16 => Some(S::F16),
        vk::ComponentTypeKHR::FLOAT32 => Some(S::F32),
        vk::ComponentTypeKHR::SINT32 => Some(S::I32),
        vk::ComponentTypeKHR::UINT32 => Some(S::U32),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(
        (m, n, k): (u32, u32, u32),
        ab: vk::ComponentTypeKHR,
        cr: vk::ComponentTypeKHR,
        scope: vk::ScopeKHR,
    ) -> vk::CooperativeMatrixPropertiesKHR<'static> {
        vk::CooperativeMatrixPropertiesKHR::default()
            .m_size(m)
            .n_size(n)
            .k_size(k)
            .a_type(ab)
            .b_type(ab)
            .c_type(cr)
            .result_type(cr)
            .scope(scope)
    }

    #[test]
    fn only_configurations_shaders_can_name_are_listed() {
        use vk::ComponentTypeKHR as T;
        let sub = vk::ScopeKHR::SUBGROUP;
        let listed = nameable(&config((16, 16, 16), T::FLOAT16, T::FLOAT32, sub))
            .expect("16x16x16 f16 -> f32 is nameable");
        assert_eq!((listed.m_size, listed.n_size, listed.k_size), (16, 16, 16));
        assert_eq!(
            (listed.ab_type, listed.cr_type),
            (
                wgt::CooperativeScalarType::F16,
                wgt::CooperativeScalarType::F32
            )
        );
        // A K of 32, 8-bit inputs, workgroup scope, A and B apart: not listed.
        assert!(nameable(&config((16, 16, 32), T::FLOAT16, T::FLOAT32, sub)).is_none());
        assert!(nameable(&config((16, 16, 16), T::SINT8, T::SINT32, sub)).is_none());
        let workgroup = vk::ScopeKHR::WORKGROUP;
        assert!(nameable(&config((16, 16, 16), T::FLOAT16, T::FLOAT16, workgroup)).is_none());
        let mut mixed = config((8, 8, 8), T::FLOAT32, T::FLOAT32, sub);
        mixed.b_type = T::FLOAT16;
        assert!(nameable(&mixed).is_none());
    }
}
