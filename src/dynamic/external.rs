//! The dyn mirror of external memory and semaphores: the marker trait of
//! external semaphores, and the conversions of submissions that name them.

use super::{cast, map_inline, DynCommandBuffer, DynFence, DynResource};
use crate::{Api, DeviceError, ExternalSubmission, SemaphoreSignal, SemaphoreWait};

/// An external semaphore of some backend.
pub trait DynExternalSemaphore: DynResource {}

/// An [`ExternalSubmission`] of dyn objects.
pub type DynExternalSubmission<'a> =
    ExternalSubmission<'a, dyn DynCommandBuffer, dyn DynExternalSemaphore, dyn DynFence>;

/// Downcasts every object of a dyn submission to `A`'s types (no heap
/// allocation for up to eight of each) and hands the result to `then`;
/// `ForeignResource` when one belongs to another backend.
pub(crate) fn with_backend_submission<A: Api, R>(
    submission: &DynExternalSubmission<'_>,
    then: impl FnOnce(&crate::ExternalSubmissionOf<'_, A>) -> Result<R, DeviceError>,
) -> Result<R, DeviceError> {
    let fence = match submission.fence {
        Some((fence, value)) => Some((
            cast::<A::Fence>(fence).ok_or(DeviceError::ForeignResource)?,
            value,
        )),
        None => None,
    };
    map_inline(
        submission.command_buffers,
        |&cb| cast::<A::CommandBuffer>(cb),
        |command_buffers| {
            map_inline(
                submission.waits,
                |w| {
                    Some(SemaphoreWait {
                        semaphore: cast::<A::ExternalSemaphore>(w.semaphore)?,
                        value: w.value,
                        stages: w.stages,
                    })
                },
                |waits| {
                    map_inline(
                        submission.signals,
                        |s| {
                            Some(SemaphoreSignal {
                                semaphore: cast::<A::ExternalSemaphore>(s.semaphore)?,
                                value: s.value,
                                stages: s.stages,
                            })
                        },
                        |signals| {
                            then(&ExternalSubmission {
                                command_buffers,
                                waits,
                                signals,
                                fence,
                            })
                        },
                    )
                },
            )
        },
    )
    .flatten()
    .flatten()
    .ok_or(DeviceError::ForeignResource)?
}
