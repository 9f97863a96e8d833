import { describe, expect, it } from 'vitest';
import { readableProviderError } from '../../src-main/core/inference/execution-providers';

describe('execution provider skip reasons', () => {
  it('onnxruntime messages become one readable line without source paths or signatures', () => {
    // As onnxruntime-node reports a machine without a GPU adapter (from this machine).
    const webgpu =
      '/onnxruntime_src/onnxruntime/core/providers/webgpu/webgpu_context.cc:136 onnxruntime::webgpu::WebGpuContext::Initialize(const onnxruntime::webgpu::WebGpuContextConfig&)::<lambda()> adapter_result.status == wgpu::RequestAdapterStatus::Success was false. Failed to get a WebGPU adapter: No supported adapters';
    expect(readableProviderError(webgpu)).toBe('Failed to get a WebGPU adapter: No supported adapters');
    const located =
      '/onnxruntime_src/onnxruntime/core/session/provider_bridge_ort.cc:1778 onnxruntime::Provider& onnxruntime::ProviderLibrary::Get() [ONNXRuntimeError] : 1 : FAIL : Failed to load library libonnxruntime_providers_cuda.so\nmore lines';
    expect(readableProviderError(located)).not.toContain('/onnxruntime_src');
    expect(readableProviderError(located)).not.toContain('\n');
    expect(readableProviderError('plain message')).toBe('plain message');
    expect(readableProviderError('x'.repeat(500)).length).toBeLessThanOrEqual(200);
  });
});
