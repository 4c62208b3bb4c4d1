//! Buffer descriptions, before any memory exists: size 0 (`ZeroSize`),
//! above `max_buffer_size` (`TooLarge`), `MAP_READ`/`MAP_WRITE` on memory
//! the CPU cannot map (`MapUsageNeedsHostMemory`, naming only the map
//! usages). Imports run the same check with their memory taken as
//! `Memory::Device` (an import is never mappable).

use crate::{BufferDescriptor, BufferError};

/// Checks a buffer description against the device's limits.
pub(crate) fn check_buffer(
    desc: &BufferDescriptor,
    limits: &wgt::Limits,
) -> Result<(), BufferError> {
    if desc.size == 0 {
        return Err(BufferError::ZeroSize);
    }
    if desc.size > limits.max_buffer_size {
        return Err(BufferError::TooLarge {
            size: desc.size,
            max: limits.max_buffer_size,
        });
    }
    let map_usage = desc.usage & (wgt::BufferUsages::MAP_READ | wgt::BufferUsages::MAP_WRITE);
    if !map_usage.is_empty() && !desc.memory.is_mappable() {
        return Err(BufferError::MapUsageNeedsHostMemory {
            usage: map_usage,
            memory: desc.memory,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Memory;

    #[test]
    fn map_usage_on_device_memory_names_the_map_usage_only() {
        let desc = BufferDescriptor {
            label: None,
            size: 16,
            usage: wgt::BufferUsages::MAP_READ | wgt::BufferUsages::COPY_DST,
            memory: Memory::Device,
        };
        let e = check_buffer(&desc, &wgt::Limits::default()).unwrap_err();
        assert_eq!(
            e,
            BufferError::MapUsageNeedsHostMemory {
                usage: wgt::BufferUsages::MAP_READ,
                memory: Memory::Device,
            }
        );
        let text = e.to_string();
        assert!(
            text.contains("MAP_READ") && text.contains("Device"),
            "{text}"
        );
        assert!(!text.contains("COPY_DST"), "{text}");
    }
}
