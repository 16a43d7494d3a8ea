//! A compute kernel: its pipeline and the names of its bindings, read from its WGSL source,
//! so that a bind group is built from the names a shader declares, never numbered by hand.

use wgpu::naga;

/// A compiled compute shader (entry point `main`, bind group 0) and its bindings by name.
pub(crate) struct Kernel {
    label: String,
    pipeline: wgpu::ComputePipeline,
    /// Each binding the source declares: its variable's name and its number.
    bindings: Vec<(String, u32)>,
}

impl Kernel {
    /// `source` compiled on `device`.
    pub fn new(device: &wgpu::Device, label: &str, source: &str) -> Kernel {
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(label),
            source: wgpu::ShaderSource::Wgsl(source.into()),
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(label),
            layout: None,
            module: &module,
            entry_point: Some("main"),
            compilation_options: Default::default(),
            cache: None,
        });
        Kernel {
            label: label.to_string(),
            pipeline,
            bindings: bindings(source),
        }
    }

    pub fn pipeline(&self) -> &wgpu::ComputePipeline {
        &self.pipeline
    }

    /// A bind group of `bound`: each binding by the name the shader gives it, and what it
    /// binds. A name the shader does not declare is a defect of the caller: it panics.
    pub fn bind<'a>(
        &self,
        device: &wgpu::Device,
        bound: impl IntoIterator<Item = (&'a str, wgpu::BindingResource<'a>)>,
    ) -> wgpu::BindGroup {
        let entries: Vec<wgpu::BindGroupEntry> = (bound.into_iter())
            .map(|(name, resource)| wgpu::BindGroupEntry {
                binding: self.binding(name),
                resource,
            })
            .collect();
        device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(&self.label),
            layout: &self.pipeline.get_bind_group_layout(0),
            entries: &entries,
        })
    }

    fn binding(&self, name: &str) -> u32 {
        let found = self.bindings.iter().find(|(declared, _)| declared == name);
        match found {
            Some(&(_, binding)) => binding,
            None => panic!("{} declares no binding named {name}", self.label),
        }
    }
}

/// The bindings `source` declares: each variable's name and binding number.
fn bindings(source: &str) -> Vec<(String, u32)> {
    let module = naga::front::wgsl::parse_str(source).expect("a kernel's source parses");
    (module.global_variables.iter())
        .filter_map(|(_, var)| Some((var.name.clone()?, var.binding.as_ref()?.binding)))
        .collect()
}

/// `buffer`, whole, as a binding binds it.
pub(crate) fn whole(buffer: &wgpu::Buffer) -> wgpu::BindingResource<'_> {
    buffer.as_entire_binding()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bindings_are_named_as_the_source_declares_them() {
        let source = "
            @group(0) @binding(0) var<uniform> params: vec4<u32>;
            @group(0) @binding(3) var<storage, read_write> sums: array<u32>;
            var<workgroup> scratch: array<u32, 64>;
        ";
        assert_eq!(
            bindings(source),
            [("params".to_string(), 0), ("sums".to_string(), 3)]
        );
    }
}
