#pragma once
// Quantization-aware scaling (tiny-training's QAS, TinyEngine's QAS_util.get_QAS): the factor a
// parameter's gradient is multiplied by before the SGD step, per output channel o, in float32 as
// TinyEngine's code generator computes it:
//   bias    1 / (s_eff[o] · s_y)²
//   weight  1 / (s_eff[o] · s_y / s_x)²
// s_eff: the conv's effective scale (its `<prefix>_scale` parameter); s_x, s_y: scale.json's
// `<prefix>_x_scale` / `<prefix>_y_scale`. Torch-free.
namespace tinyscope {

inline float qasBiasFactor(float effectiveScale, float yScale)
{
    const float q = effectiveScale * yScale;
    return 1.0f / (q * q);
}

inline float qasWeightFactor(float effectiveScale, float yScale, float xScale)
{
    const float w = effectiveScale * yScale / xScale;
    return 1.0f / (w * w);
}

}  // namespace tinyscope
