//! Query-set descriptions: a count of 0 or above [`crate::MAX_QUERIES`]
//! (`InvalidCount`); pipeline statistics or timestamps on a device without
//! `PIPELINE_STATISTICS_QUERY` / `TIMESTAMP_QUERY` (`MissingFeature`);
//! pipeline statistics that count nothing (`NoStatistics`). And how many
//! `u64` values one query's result is ([`values_per_query`]), which bounds
//! every copy of results.

use crate::{QuerySetDescriptor, QuerySetError};

/// Checks a query-set description against the device's features.
pub(crate) fn check_query_set(
    desc: &QuerySetDescriptor,
    features: wgt::Features,
) -> Result<(), QuerySetError> {
    if desc.count == 0 || desc.count > crate::MAX_QUERIES {
        return Err(QuerySetError::InvalidCount(desc.count));
    }
    let missing = |feature| QuerySetError::MissingFeature {
        feature,
        enabled: features,
    };
    match desc.ty {
        wgt::QueryType::Occlusion => Ok(()),
        wgt::QueryType::Timestamp if features.contains(wgt::Features::TIMESTAMP_QUERY) => Ok(()),
        wgt::QueryType::Timestamp => Err(missing(wgt::Features::TIMESTAMP_QUERY)),
        wgt::QueryType::PipelineStatistics(_)
            if !features.contains(wgt::Features::PIPELINE_STATISTICS_QUERY) =>
        {
            Err(missing(wgt::Features::PIPELINE_STATISTICS_QUERY))
        }
        wgt::QueryType::PipelineStatistics(types) if types.is_empty() => {
            Err(QuerySetError::NoStatistics)
        }
        wgt::QueryType::PipelineStatistics(_) => Ok(()),
    }
}

/// The `u64` values one query of `ty` resolves to: one for occlusion and
/// timestamps; one per counted statistic for pipeline statistics, in the
/// order of [`wgt::PipelineStatisticsTypes`]' bits.
pub(crate) fn values_per_query(ty: wgt::QueryType) -> u64 {
    match ty {
        wgt::QueryType::PipelineStatistics(types) => u64::from(types.bits().count_ones()),
        wgt::QueryType::Occlusion | wgt::QueryType::Timestamp => 1,
    }
}

/// Whether `count` results of a `ty` set, `stride` bytes apart from
/// `offset`, fit a buffer of `size` bytes without overlapping: each result
/// is [`values_per_query`] `u64`s, so several need a stride of at least
/// that many bytes. Both backends check every copy of results with it.
pub(crate) fn results_fit(
    size: u64,
    ty: wgt::QueryType,
    count: u32,
    offset: u64,
    stride: u64,
) -> bool {
    if count == 0 {
        return true;
    }
    let result = 8 * values_per_query(ty);
    if count > 1 && stride < result {
        return false;
    }
    u64::from(count - 1)
        .checked_mul(stride)
        .and_then(|last| last.checked_add(offset))
        .and_then(|last| last.checked_add(result))
        .is_some_and(|end| end <= size)
}

#[cfg(test)]
mod tests {
    use super::*;

    const STATS: wgt::QueryType = wgt::QueryType::PipelineStatistics(
        wgt::PipelineStatisticsTypes::VERTEX_SHADER_INVOCATIONS
            .union(wgt::PipelineStatisticsTypes::COMPUTE_SHADER_INVOCATIONS),
    );

    #[test]
    fn results_need_room_and_a_real_stride() {
        let occ = wgt::QueryType::Occlusion;
        assert!(results_fit(16, occ, 2, 0, 8));
        assert!(!results_fit(16, occ, 2, 8, 8));
        assert!(
            !results_fit(64, occ, 2, 0, 0),
            "stride 0 with several queries"
        );
        assert!(results_fit(8, occ, 1, 0, 0), "one query needs no stride");
        assert!(results_fit(0, occ, 0, 0, 0));
        assert!(!results_fit(u64::MAX, occ, 3, 0, u64::MAX));
    }

    #[test]
    fn statistics_results_are_one_u64_per_statistic() {
        assert_eq!(values_per_query(STATS), 2);
        assert!(results_fit(32, STATS, 2, 0, 16));
        assert!(!results_fit(32, STATS, 2, 0, 8), "results would overlap");
        assert!(!results_fit(24, STATS, 1, 16, 0), "one result is 16 bytes");
        assert!(results_fit(32, STATS, 1, 16, 0));
    }

    #[test]
    fn statistics_need_the_feature_and_a_statistic() {
        let desc = |ty| QuerySetDescriptor {
            label: None,
            ty,
            count: 1,
        };
        let all = wgt::Features::PIPELINE_STATISTICS_QUERY;
        assert!(matches!(
            check_query_set(&desc(STATS), wgt::Features::empty()),
            Err(QuerySetError::MissingFeature { .. })
        ));
        assert_eq!(check_query_set(&desc(STATS), all), Ok(()));
        let none = wgt::QueryType::PipelineStatistics(wgt::PipelineStatisticsTypes::empty());
        assert_eq!(
            check_query_set(&desc(none), all),
            Err(QuerySetError::NoStatistics)
        );
    }
}
