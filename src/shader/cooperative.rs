//! Cooperative matrices a module uses, against the configurations the
//! device offers (`Capabilities::cooperative_matrix_properties`).
//!
//! A cooperative-matrix type the driver offers no configuration for is
//! invalid SPIR-V for it (`VUID-RuntimeSpirv-OpTypeCooperativeMatrixKHR-08974`:
//! each matrix type must match a listed configuration), so it is refused
//! when the module is made, naming the matrix and what the device offers.
//! A matrix of role A is M × K, B is K × N, C (and the result) M × N: rows
//! and columns are checked against those sizes, its scalar type against
//! the configuration's A/B or C/result type.

use crate::ShaderError;

/// Refuses the first cooperative matrix of `module` (declared types, and
/// the values its expressions make) that no configuration of `offered`
/// fits.
pub(crate) fn check(
    module: &naga::Module,
    info: &naga::valid::ModuleInfo,
    offered: &[wgt::CooperativeMatrixProperties],
) -> Result<(), ShaderError> {
    let declared = module.types.iter().map(|(_, ty)| &ty.inner);
    let functions = module
        .functions
        .iter()
        .map(|(handle, f)| (f, &info[handle]))
        .chain(
            module
                .entry_points
                .iter()
                .enumerate()
                .map(|(i, e)| (&e.function, info.get_entry_point(i))),
        );
    let made = functions.flat_map(|(f, fi)| {
        f.expressions
            .iter()
            .map(move |(handle, _)| fi[handle].ty.inner_with(&module.types))
    });
    for inner in declared.chain(made) {
        if let naga::TypeInner::CooperativeMatrix {
            columns,
            rows,
            scalar,
            role,
        } = *inner
        {
            let (rows, columns) = (rows as u32, columns as u32);
            if !offered.iter().any(|p| fits(p, role, rows, columns, scalar)) {
                return Err(ShaderError::UnsupportedCooperativeMatrix {
                    role,
                    rows,
                    columns,
                    scalar,
                    offered: offered.to_vec(),
                });
            }
        }
    }
    Ok(())
}

/// Whether configuration `p` has a `role` matrix of `rows` × `columns`
/// elements of `scalar`.
fn fits(
    p: &wgt::CooperativeMatrixProperties,
    role: naga::CooperativeRole,
    rows: u32,
    columns: u32,
    scalar: naga::Scalar,
) -> bool {
    use naga::CooperativeRole as R;
    let (want_rows, want_columns, ty) = match role {
        R::A => (p.m_size, p.k_size, p.ab_type),
        R::B => (p.k_size, p.n_size, p.ab_type),
        R::C => (p.m_size, p.n_size, p.cr_type),
    };
    (rows, columns) == (want_rows, want_columns) && Some(ty) == scalar_type(scalar)
}

/// A naga scalar as a cooperative scalar type, if it is one.
fn scalar_type(scalar: naga::Scalar) -> Option<wgt::CooperativeScalarType> {
    use naga::ScalarKind as K;
    use wgt::CooperativeScalarType as S;
    match (scalar.kind, scalar.width) {
        (K::Float, 2) => Some(S::F16),
        (K::Float, 4) => Some(S::F32),
        (K::Sint, 4) => Some(S::I32),
        (K::Uint, 4) => Some(S::U32),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn module(wgsl: &str) -> (naga::Module, naga::valid::ModuleInfo) {
        let options = naga::front::wgsl::Options {
            parse_doc_comments: false,
            capabilities: naga::valid::Capabilities::all(),
        };
        let module = naga::front::wgsl::Frontend::new_with_options(options)
            .parse(wgsl)
            .expect("test WGSL");
        let info = naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::all(),
        )
        .validate(&module)
        .expect("valid test WGSL");
        (module, info)
    }

    fn multiply_add(n: u32, ab: &str, cr: &str) -> String {
        format!(
            "enable f16;
enable wgpu_cooperative_matrix;
@group(0) @binding(0) var<storage, read_write> a: array<{ab}>;
@group(0) @binding(1) var<storage, read_write> c: array<{cr}>;
@compute @workgroup_size(64) fn main() {{
    let ma = coopLoad<coop_mat{n}x{n}<{ab}, A>>(&a[0], {n}u);
    let mb = coopLoad<coop_mat{n}x{n}<{ab}, B>>(&a[0], {n}u);
    let mc = coopLoad<coop_mat{n}x{n}<{cr}, C>>(&c[0], {n}u);
    coopStore(coopMultiplyAdd(ma, mb, mc), &c[0], {n}u);
}}"
        )
    }

    /// The H200's kind of list: 16×16×16 with f16 inputs.
    fn offered() -> Vec<wgt::CooperativeMatrixProperties> {
        use wgt::CooperativeScalarType as S;
        let config = |ab, cr| wgt::CooperativeMatrixProperties {
            m_size: 16,
            n_size: 16,
            k_size: 16,
            ab_type: ab,
            cr_type: cr,
            saturating_accumulation: false,
        };
        vec![config(S::F16, S::F16), config(S::F16, S::F32)]
    }

    #[test]
    fn matrices_must_fit_an_offered_configuration() {
        let (m, i) = module(&multiply_add(16, "f16", "f32"));
        assert_eq!(check(&m, &i, &offered()), Ok(()));
        // 8×8, or f32 inputs: nothing offered fits; the first matrix is named.
        let (m, i) = module(&multiply_add(8, "f16", "f32"));
        match check(&m, &i, &offered()) {
            Err(ShaderError::UnsupportedCooperativeMatrix {
                rows: 8,
                columns: 8,
                offered,
                ..
            }) => assert_eq!(offered.len(), 2),
            other => panic!("expected UnsupportedCooperativeMatrix, got {other:?}"),
        }
        let (m, i) = module(&multiply_add(16, "f32", "f32"));
        assert!(matches!(
            check(&m, &i, &offered()),
            Err(ShaderError::UnsupportedCooperativeMatrix {
                role: naga::CooperativeRole::A | naga::CooperativeRole::B,
                ..
            })
        ));
        // A module without cooperative matrices needs no configuration.
        let (m, i) = module("@compute @workgroup_size(1) fn main() {}");
        assert_eq!(check(&m, &i, &[]), Ok(()));
    }
}
