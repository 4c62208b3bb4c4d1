//! Query-set descriptions: a count of 0 or above [`crate::MAX_QUERIES`]
//! (`InvalidCount`); pipeline statistics (never supported), or timestamps
//! on a device without `TIMESTAMP_QUERY` (`MissingFeature`).

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
        wgt::QueryType::PipelineStatistics(_) => {
            Err(missing(wgt::Features::PIPELINE_STATISTICS_QUERY))
        }
    }
}
