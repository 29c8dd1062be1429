"""Attribute defaults of the ONNX operator schemas (default domain), by op type and opset.

Generated from ``onnx.defs`` (onnx 1.23.2) for the op types that have a cost formula, shape function or
folder, so that reading a default does not import the onnx package (~0.3 s with numpy). Regenerate
with ``python scripts/gen_schema_defaults.py`` after adding ops or moving to a newer onnx.
``schema_defaults`` returns None for anything not in the table: the caller then asks onnx.defs.
"""
from __future__ import annotations

ONNX_VERSION = '1.23.2'

# op type -> [(since_version, {attribute: default}), ...] in increasing since_version
DEFAULTS: dict[str, list[tuple[int, dict]]] = {
    'Abs': [
        (1, {}),
        (6, {}),
        (13, {}),
    ],
    'Acos': [
        (7, {}),
        (22, {}),
    ],
    'Acosh': [
        (9, {}),
        (22, {}),
    ],
    'Add': [
        (1, {'broadcast': 0}),
        (6, {'broadcast': 0}),
        (7, {}),
        (13, {}),
        (14, {}),
    ],
    'And': [
        (1, {'broadcast': 0}),
        (7, {}),
    ],
    'ArgMax': [
        (1, {'axis': 0, 'keepdims': 1}),
        (11, {'axis': 0, 'keepdims': 1}),
        (12, {'axis': 0, 'keepdims': 1, 'select_last_index': 0}),
        (13, {'axis': 0, 'keepdims': 1, 'select_last_index': 0}),
    ],
    'ArgMin': [
        (1, {'axis': 0, 'keepdims': 1}),
        (11, {'axis': 0, 'keepdims': 1}),
        (12, {'axis': 0, 'keepdims': 1, 'select_last_index': 0}),
        (13, {'axis': 0, 'keepdims': 1, 'select_last_index': 0}),
    ],
    'Asin': [
        (7, {}),
        (22, {}),
    ],
    'Asinh': [
        (9, {}),
        (22, {}),
    ],
    'Atan': [
        (7, {}),
        (22, {}),
    ],
    'Atanh': [
        (9, {}),
        (22, {}),
    ],
    'Attention': [
        (23, {'is_causal': 0, 'qk_matmul_output_mode': 0, 'softcap': 0.0}),
        (24, {'is_causal': 0, 'qk_matmul_output_mode': 0, 'softcap': 0.0}),
        (25, {'is_causal': 0, 'left_window_size': -1, 'qk_matmul_output_mode': 0, 'right_window_size': -1, 'softcap': 0.0}),
    ],
    'AveragePool': [
        (1, {'auto_pad': 'NOTSET'}),
        (7, {'auto_pad': 'NOTSET', 'count_include_pad': 0}),
        (10, {'auto_pad': 'NOTSET', 'ceil_mode': 0, 'count_include_pad': 0}),
        (11, {'auto_pad': 'NOTSET', 'ceil_mode': 0, 'count_include_pad': 0}),
        (19, {'auto_pad': 'NOTSET', 'ceil_mode': 0, 'count_include_pad': 0}),
        (22, {'auto_pad': 'NOTSET', 'ceil_mode': 0, 'count_include_pad': 0}),
    ],
    'BatchNormalization': [
        (1, {'epsilon': 9.999999747378752e-06, 'is_test': 0, 'momentum': 0.8999999761581421, 'spatial': 1}),
        (6, {'epsilon': 9.999999747378752e-06, 'is_test': 0, 'momentum': 0.8999999761581421, 'spatial': 1}),
        (7, {'epsilon': 9.999999747378752e-06, 'momentum': 0.8999999761581421, 'spatial': 1}),
        (9, {'epsilon': 9.999999747378752e-06, 'momentum': 0.8999999761581421}),
        (14, {'epsilon': 9.999999747378752e-06, 'momentum': 0.8999999761581421, 'training_mode': 0}),
        (15, {'epsilon': 9.999999747378752e-06, 'momentum': 0.8999999761581421, 'training_mode': 0}),
    ],
    'BitShift': [
        (11, {}),
        (28, {}),
    ],
    'BitwiseAnd': [
        (18, {}),
    ],
    'BitwiseNot': [
        (18, {}),
    ],
    'BitwiseOr': [
        (18, {}),
    ],
    'BitwiseXor': [
        (18, {}),
    ],
    'Cast': [
        (1, {}),
        (6, {}),
        (9, {}),
        (13, {}),
        (19, {'saturate': 1}),
        (21, {'saturate': 1}),
        (23, {'saturate': 1}),
        (24, {'round_mode': 'up', 'saturate': 1}),
        (25, {'round_mode': 'up', 'saturate': 1}),
        (28, {'round_mode': 'up', 'saturate': 1}),
    ],
    'CastLike': [
        (15, {}),
        (19, {'saturate': 1}),
        (21, {'saturate': 1}),
        (23, {'saturate': 1}),
        (24, {'round_mode': 'up', 'saturate': 1}),
        (25, {'round_mode': 'up', 'saturate': 1}),
    ],
    'Ceil': [
        (1, {}),
        (6, {}),
        (13, {}),
    ],
    'Celu': [
        (12, {'alpha': 1.0}),
        (28, {'alpha': 1.0}),
    ],
    'Clip': [
        (1, {}),
        (6, {'max': 3.4028234663852886e+38, 'min': -3.4028234663852886e+38}),
        (11, {}),
        (12, {}),
        (13, {}),
    ],
    'Concat': [
        (1, {}),
        (4, {}),
        (11, {}),
        (13, {}),
    ],
    'Constant': [
        (1, {}),
        (9, {}),
        (11, {}),
        (12, {}),
        (13, {}),
        (19, {}),
        (21, {}),
        (23, {}),
        (24, {}),
        (25, {}),
    ],
    'ConstantOfShape': [
        (9, {}),
        (20, {}),
        (21, {}),
        (23, {}),
        (24, {}),
        (25, {}),
    ],
    'Conv': [
        (1, {'auto_pad': 'NOTSET', 'group': 1}),
        (11, {'auto_pad': 'NOTSET', 'group': 1}),
        (22, {'auto_pad': 'NOTSET', 'group': 1}),
    ],
    'ConvInteger': [
        (10, {'auto_pad': 'NOTSET', 'group': 1}),
    ],
    'ConvTranspose': [
        (1, {'auto_pad': 'NOTSET', 'group': 1}),
        (11, {'auto_pad': 'NOTSET', 'group': 1}),
        (22, {'auto_pad': 'NOTSET', 'group': 1}),
    ],
    'Cos': [
        (7, {}),
        (22, {}),
    ],
    'Cosh': [
        (9, {}),
        (22, {}),
    ],
    'CumProd': [
        (26, {'exclusive': 0, 'reverse': 0}),
    ],
    'CumSum': [
        (11, {'exclusive': 0, 'reverse': 0}),
        (14, {'exclusive': 0, 'reverse': 0}),
    ],
    'DepthToSpace': [
        (1, {}),
        (11, {'mode': 'DCR'}),
        (13, {'mode': 'DCR'}),
        (28, {'mode': 'DCR'}),
    ],
    'DequantizeLinear': [
        (10, {}),
        (13, {'axis': 1}),
        (19, {'axis': 1}),
        (21, {'axis': 1, 'block_size': 0}),
        (23, {'axis': 1, 'block_size': 0, 'output_dtype': 0}),
        (24, {'axis': 1, 'block_size': 0, 'output_dtype': 0}),
        (25, {'axis': 1, 'block_size': 0, 'output_dtype': 0}),
        (28, {'axis': 1, 'block_size': 0, 'output_dtype': 0}),
    ],
    'Div': [
        (1, {'broadcast': 0}),
        (6, {'broadcast': 0}),
        (7, {}),
        (13, {}),
        (14, {}),
    ],
    'Dropout': [
        (1, {'is_test': 0, 'ratio': 0.5}),
        (6, {'is_test': 0, 'ratio': 0.5}),
        (7, {'ratio': 0.5}),
        (10, {'ratio': 0.5}),
        (12, {}),
        (13, {}),
        (22, {}),
    ],
    'Einsum': [
        (12, {}),
        (28, {}),
    ],
    'Elu': [
        (1, {'alpha': 1.0}),
        (6, {'alpha': 1.0}),
        (22, {'alpha': 1.0}),
    ],
    'Equal': [
        (1, {'broadcast': 0}),
        (7, {}),
        (11, {}),
        (13, {}),
        (19, {}),
    ],
    'Erf': [
        (9, {}),
        (13, {}),
    ],
    'Exp': [
        (1, {}),
        (6, {}),
        (13, {}),
    ],
    'Expand': [
        (8, {}),
        (13, {}),
    ],
    'Flatten': [
        (1, {'axis': 1}),
        (9, {'axis': 1}),
        (11, {'axis': 1}),
        (13, {'axis': 1}),
        (21, {'axis': 1}),
        (23, {'axis': 1}),
        (24, {'axis': 1}),
        (25, {'axis': 1}),
    ],
    'Floor': [
        (1, {}),
        (6, {}),
        (13, {}),
    ],
    'GRU': [
        (1, {'direction': 'foward', 'output_sequence': 0}),
        (3, {'direction': 'forward', 'linear_before_reset': 0, 'output_sequence': 0}),
        (7, {'direction': 'forward', 'linear_before_reset': 0}),
        (14, {'direction': 'forward', 'layout': 0, 'linear_before_reset': 0}),
        (22, {'direction': 'forward', 'layout': 0, 'linear_before_reset': 0}),
    ],
    'Gather': [
        (1, {'axis': 0}),
        (11, {'axis': 0}),
        (13, {'axis': 0}),
    ],
    'GatherElements': [
        (11, {'axis': 0}),
        (13, {'axis': 0}),
    ],
    'GatherND': [
        (11, {}),
        (12, {'batch_dims': 0}),
        (13, {'batch_dims': 0}),
    ],
    'Gelu': [
        (20, {'approximate': 'none'}),
    ],
    'Gemm': [
        (1, {'alpha': 1.0, 'beta': 1.0, 'broadcast': 0, 'transA': 0, 'transB': 0}),
        (6, {'alpha': 1.0, 'beta': 1.0, 'broadcast': 0, 'transA': 0, 'transB': 0}),
        (7, {'alpha': 1.0, 'beta': 1.0, 'transA': 0, 'transB': 0}),
        (9, {'alpha': 1.0, 'beta': 1.0, 'transA': 0, 'transB': 0}),
        (11, {'alpha': 1.0, 'beta': 1.0, 'transA': 0, 'transB': 0}),
        (13, {'alpha': 1.0, 'beta': 1.0, 'transA': 0, 'transB': 0}),
    ],
    'GlobalAveragePool': [
        (1, {}),
        (22, {}),
    ],
    'GlobalLpPool': [
        (1, {'p': 2.0}),
        (2, {'p': 2}),
        (22, {'p': 2}),
    ],
    'GlobalMaxPool': [
        (1, {}),
        (22, {}),
    ],
    'Greater': [
        (1, {'broadcast': 0}),
        (7, {}),
        (9, {}),
        (13, {}),
    ],
    'GreaterOrEqual': [
        (12, {}),
        (16, {}),
    ],
    'GroupNormalization': [
        (18, {'epsilon': 9.999999747378752e-06}),
        (21, {'epsilon': 9.999999747378752e-06, 'stash_type': 1}),
    ],
    'HardSigmoid': [
        (1, {'alpha': 0.20000000298023224, 'beta': 0.5}),
        (6, {'alpha': 0.20000000298023224, 'beta': 0.5}),
        (22, {'alpha': 0.20000000298023224, 'beta': 0.5}),
    ],
    'HardSwish': [
        (14, {}),
        (22, {}),
    ],
    'Hardmax': [
        (1, {'axis': 1}),
        (11, {'axis': 1}),
        (13, {'axis': -1}),
    ],
    'Identity': [
        (1, {}),
        (13, {}),
        (14, {}),
        (16, {}),
        (19, {}),
        (21, {}),
        (23, {}),
        (24, {}),
        (25, {}),
    ],
    'InstanceNormalization': [
        (1, {'epsilon': 9.999999747378752e-06}),
        (6, {'epsilon': 9.999999747378752e-06}),
        (22, {'epsilon': 9.999999747378752e-06}),
    ],
    'IsInf': [
        (10, {'detect_negative': 1, 'detect_positive': 1}),
        (20, {'detect_negative': 1, 'detect_positive': 1}),
    ],
    'IsNaN': [
        (9, {}),
        (13, {}),
        (20, {}),
    ],
    'LRN': [
        (1, {'alpha': 9.999999747378752e-05, 'beta': 0.75, 'bias': 1.0}),
        (13, {'alpha': 9.999999747378752e-05, 'beta': 0.75, 'bias': 1.0}),
    ],
    'LSTM': [
        (1, {'direction': 'forward', 'input_forget': 0, 'output_sequence': 0}),
        (7, {'direction': 'forward', 'input_forget': 0}),
        (14, {'direction': 'forward', 'input_forget': 0, 'layout': 0}),
        (22, {'direction': 'forward', 'input_forget': 0, 'layout': 0}),
    ],
    'LayerNormalization': [
        (17, {'axis': -1, 'epsilon': 9.999999747378752e-06, 'stash_type': 1}),
    ],
    'LeakyRelu': [
        (1, {'alpha': 0.009999999776482582}),
        (6, {'alpha': 0.009999999776482582}),
        (16, {'alpha': 0.009999999776482582}),
    ],
    'Less': [
        (1, {'broadcast': 0}),
        (7, {}),
        (9, {}),
        (13, {}),
    ],
    'LessOrEqual': [
        (12, {}),
        (16, {}),
    ],
    'Log': [
        (1, {}),
        (6, {}),
        (13, {}),
    ],
    'LogSoftmax': [
        (1, {'axis': 1}),
        (11, {'axis': 1}),
        (13, {'axis': -1}),
    ],
    'LpNormalization': [
        (1, {'axis': -1, 'p': 2}),
        (22, {'axis': -1, 'p': 2}),
    ],
    'LpPool': [
        (1, {'auto_pad': 'NOTSET', 'p': 2.0}),
        (2, {'auto_pad': 'NOTSET', 'p': 2}),
        (11, {'auto_pad': 'NOTSET', 'p': 2}),
        (18, {'auto_pad': 'NOTSET', 'ceil_mode': 0, 'p': 2}),
        (22, {'auto_pad': 'NOTSET', 'ceil_mode': 0, 'p': 2}),
    ],
    'MatMul': [
        (1, {}),
        (9, {}),
        (13, {}),
    ],
    'MatMulInteger': [
        (10, {}),
    ],
    'Max': [
        (1, {}),
        (6, {}),
        (8, {}),
        (12, {}),
        (13, {}),
    ],
    'MaxPool': [
        (1, {'auto_pad': 'NOTSET'}),
        (8, {'auto_pad': 'NOTSET', 'storage_order': 0}),
        (10, {'auto_pad': 'NOTSET', 'ceil_mode': 0, 'storage_order': 0}),
        (11, {'auto_pad': 'NOTSET', 'ceil_mode': 0, 'storage_order': 0}),
        (12, {'auto_pad': 'NOTSET', 'ceil_mode': 0, 'storage_order': 0}),
        (22, {'auto_pad': 'NOTSET', 'ceil_mode': 0, 'storage_order': 0}),
    ],
    'Mean': [
        (1, {}),
        (6, {}),
        (8, {}),
        (13, {}),
    ],
    'MeanVarianceNormalization': [
        (9, {'axes': [0, 2, 3]}),
        (13, {'axes': [0, 2, 3]}),
    ],
    'Min': [
        (1, {}),
        (6, {}),
        (8, {}),
        (12, {}),
        (13, {}),
    ],
    'Mish': [
        (18, {}),
        (22, {}),
    ],
    'Mod': [
        (10, {'fmod': 0}),
        (13, {'fmod': 0}),
        (28, {'fmod': 0}),
    ],
    'Mul': [
        (1, {'broadcast': 0}),
        (6, {'broadcast': 0}),
        (7, {}),
        (13, {}),
        (14, {}),
    ],
    'Neg': [
        (1, {}),
        (6, {}),
        (13, {}),
    ],
    'NonZero': [
        (9, {}),
        (13, {}),
    ],
    'Not': [
        (1, {}),
    ],
    'OneHot': [
        (9, {'axis': -1}),
        (11, {'axis': -1}),
        (28, {'axis': -1}),
    ],
    'Or': [
        (1, {'broadcast': 0}),
        (7, {}),
    ],
    'PRelu': [
        (1, {}),
        (6, {}),
        (7, {}),
        (9, {}),
        (16, {}),
    ],
    'Pad': [
        (1, {'mode': 'constant', 'value': 0.0}),
        (2, {'mode': 'constant', 'value': 0.0}),
        (11, {'mode': 'constant'}),
        (13, {'mode': 'constant'}),
        (18, {'mode': 'constant'}),
        (19, {'mode': 'constant'}),
        (21, {'mode': 'constant'}),
        (23, {'mode': 'constant'}),
        (24, {'mode': 'constant'}),
        (25, {'mode': 'constant'}),
    ],
    'Pow': [
        (1, {'broadcast': 0}),
        (7, {}),
        (12, {}),
        (13, {}),
        (15, {}),
    ],
    'QLinearConv': [
        (10, {'auto_pad': 'NOTSET', 'group': 1}),
    ],
    'QLinearMatMul': [
        (10, {}),
        (21, {}),
    ],
    'QuantizeLinear': [
        (10, {}),
        (13, {'axis': 1}),
        (19, {'axis': 1, 'saturate': 1}),
        (21, {'axis': 1, 'block_size': 0, 'output_dtype': 0, 'saturate': 1}),
        (23, {'axis': 1, 'block_size': 0, 'output_dtype': 0, 'precision': 0, 'saturate': 1}),
        (24, {'axis': 1, 'block_size': 0, 'output_dtype': 0, 'precision': 0, 'saturate': 1}),
        (25, {'axis': 1, 'block_size': 0, 'output_dtype': 0, 'precision': 0, 'saturate': 1}),
        (28, {'axis': 1, 'block_size': 0, 'output_dtype': 0, 'precision': 0, 'saturate': 1}),
    ],
    'RMSNormalization': [
        (23, {'axis': -1, 'epsilon': 9.999999747378752e-06, 'stash_type': 1}),
    ],
    'RNN': [
        (1, {'activations': ['Tanh', 'Tanh'], 'direction': 'forward', 'output_sequence': 0}),
        (7, {'activations': ['Tanh', 'Tanh'], 'direction': 'forward'}),
        (14, {'activations': ['Tanh', 'Tanh'], 'direction': 'forward', 'layout': 0}),
        (22, {'activations': ['Tanh', 'Tanh'], 'direction': 'forward', 'layout': 0}),
    ],
    'Range': [
        (11, {}),
        (27, {'stash_type': 1}),
    ],
    'Reciprocal': [
        (1, {}),
        (6, {}),
        (13, {}),
    ],
    'ReduceL1': [
        (1, {'keepdims': 1}),
        (11, {'keepdims': 1}),
        (13, {'keepdims': 1}),
        (18, {'keepdims': 1, 'noop_with_empty_axes': 0}),
    ],
    'ReduceL2': [
        (1, {'keepdims': 1}),
        (11, {'keepdims': 1}),
        (13, {'keepdims': 1}),
        (18, {'keepdims': 1, 'noop_with_empty_axes': 0}),
    ],
    'ReduceLogSum': [
        (1, {'keepdims': 1}),
        (11, {'keepdims': 1}),
        (13, {'keepdims': 1}),
        (18, {'keepdims': 1, 'noop_with_empty_axes': 0}),
        (28, {'keepdims': 1, 'noop_with_empty_axes': 0}),
    ],
    'ReduceLogSumExp': [
        (1, {'keepdims': 1}),
        (11, {'keepdims': 1}),
        (13, {'keepdims': 1}),
        (18, {'keepdims': 1, 'noop_with_empty_axes': 0}),
        (28, {'keepdims': 1, 'noop_with_empty_axes': 0}),
    ],
    'ReduceMax': [
        (1, {'keepdims': 1}),
        (11, {'keepdims': 1}),
        (12, {'keepdims': 1}),
        (13, {'keepdims': 1}),
        (18, {'keepdims': 1, 'noop_with_empty_axes': 0}),
        (20, {'keepdims': 1, 'noop_with_empty_axes': 0}),
    ],
    'ReduceMean': [
        (1, {'keepdims': 1}),
        (11, {'keepdims': 1}),
        (13, {'keepdims': 1}),
        (18, {'keepdims': 1, 'noop_with_empty_axes': 0}),
    ],
    'ReduceMin': [
        (1, {'keepdims': 1}),
        (11, {'keepdims': 1}),
        (12, {'keepdims': 1}),
        (13, {'keepdims': 1}),
        (18, {'keepdims': 1, 'noop_with_empty_axes': 0}),
        (20, {'keepdims': 1, 'noop_with_empty_axes': 0}),
    ],
    'ReduceProd': [
        (1, {'keepdims': 1}),
        (11, {'keepdims': 1}),
        (13, {'keepdims': 1}),
        (18, {'keepdims': 1, 'noop_with_empty_axes': 0}),
    ],
    'ReduceSum': [
        (1, {'keepdims': 1}),
        (11, {'keepdims': 1}),
        (13, {'keepdims': 1, 'noop_with_empty_axes': 0}),
    ],
    'ReduceSumSquare': [
        (1, {'keepdims': 1}),
        (11, {'keepdims': 1}),
        (13, {'keepdims': 1}),
        (18, {'keepdims': 1, 'noop_with_empty_axes': 0}),
    ],
    'Relu': [
        (1, {}),
        (6, {}),
        (13, {}),
        (14, {}),
    ],
    'Reshape': [
        (1, {}),
        (5, {}),
        (13, {}),
        (14, {'allowzero': 0}),
        (19, {'allowzero': 0}),
        (21, {'allowzero': 0}),
        (23, {'allowzero': 0}),
        (24, {'allowzero': 0}),
        (25, {'allowzero': 0}),
    ],
    'Resize': [
        (10, {'mode': 'nearest'}),
        (11, {'coordinate_transformation_mode': 'half_pixel', 'cubic_coeff_a': -0.75, 'exclude_outside': 0, 'extrapolation_value': 0.0, 'mode': 'nearest', 'nearest_mode': 'round_prefer_floor'}),
        (13, {'coordinate_transformation_mode': 'half_pixel', 'cubic_coeff_a': -0.75, 'exclude_outside': 0, 'extrapolation_value': 0.0, 'mode': 'nearest', 'nearest_mode': 'round_prefer_floor'}),
        (18, {'antialias': 0, 'coordinate_transformation_mode': 'half_pixel', 'cubic_coeff_a': -0.75, 'exclude_outside': 0, 'extrapolation_value': 0.0, 'keep_aspect_ratio_policy': 'stretch', 'mode': 'nearest', 'nearest_mode': 'round_prefer_floor'}),
        (19, {'antialias': 0, 'coordinate_transformation_mode': 'half_pixel', 'cubic_coeff_a': -0.75, 'exclude_outside': 0, 'extrapolation_value': 0.0, 'keep_aspect_ratio_policy': 'stretch', 'mode': 'nearest', 'nearest_mode': 'round_prefer_floor'}),
    ],
    'RotaryEmbedding': [
        (23, {'interleaved': 0, 'rotary_embedding_dim': 0}),
    ],
    'Round': [
        (11, {}),
        (22, {}),
    ],
    'Scatter': [
        (9, {'axis': 0}),
        (11, {'axis': 0}),
    ],
    'ScatterElements': [
        (11, {'axis': 0}),
        (13, {'axis': 0}),
        (16, {'axis': 0, 'reduction': 'none'}),
        (18, {'axis': 0, 'reduction': 'none'}),
    ],
    'ScatterND': [
        (11, {}),
        (13, {}),
        (16, {'reduction': 'none'}),
        (18, {'reduction': 'none'}),
    ],
    'Selu': [
        (1, {'alpha': 1.673200011253357, 'gamma': 1.0506999492645264}),
        (6, {'alpha': 1.6732631921768188, 'gamma': 1.0507010221481323}),
        (22, {'alpha': 1.6732631921768188, 'gamma': 1.0507010221481323}),
    ],
    'Shape': [
        (1, {}),
        (13, {}),
        (15, {'start': 0}),
        (19, {'start': 0}),
        (21, {'start': 0}),
        (23, {'start': 0}),
        (24, {'start': 0}),
        (25, {'start': 0}),
    ],
    'Shrink': [
        (9, {'bias': 0.0, 'lambd': 0.5}),
    ],
    'Sigmoid': [
        (1, {}),
        (6, {}),
        (13, {}),
    ],
    'Sign': [
        (9, {}),
        (13, {}),
    ],
    'Sin': [
        (7, {}),
        (22, {}),
    ],
    'Sinh': [
        (9, {}),
        (22, {}),
    ],
    'Size': [
        (1, {}),
        (13, {}),
        (19, {}),
        (21, {}),
        (23, {}),
        (24, {}),
        (25, {}),
    ],
    'Slice': [
        (1, {}),
        (10, {}),
        (11, {}),
        (13, {}),
    ],
    'Softmax': [
        (1, {'axis': 1}),
        (11, {'axis': 1}),
        (13, {'axis': -1}),
    ],
    'Softplus': [
        (1, {}),
        (22, {}),
    ],
    'Softsign': [
        (1, {}),
        (22, {}),
    ],
    'SpaceToDepth': [
        (1, {}),
        (13, {}),
        (28, {'mode': 'DCR'}),
    ],
    'Split': [
        (1, {}),
        (2, {'axis': 0}),
        (11, {'axis': 0}),
        (13, {'axis': 0}),
        (18, {'axis': 0}),
    ],
    'Sqrt': [
        (1, {}),
        (6, {}),
        (13, {}),
    ],
    'Squeeze': [
        (1, {}),
        (11, {}),
        (13, {}),
        (21, {}),
        (23, {}),
        (24, {}),
        (25, {}),
    ],
    'Sub': [
        (1, {'broadcast': 0}),
        (6, {'broadcast': 0}),
        (7, {}),
        (13, {}),
        (14, {}),
    ],
    'Sum': [
        (1, {}),
        (6, {}),
        (8, {}),
        (13, {}),
    ],
    'Swish': [
        (24, {'alpha': 1.0}),
    ],
    'Tan': [
        (7, {}),
        (22, {}),
    ],
    'Tanh': [
        (1, {}),
        (6, {}),
        (13, {}),
    ],
    'ThresholdedRelu': [
        (10, {'alpha': 1.0}),
        (22, {'alpha': 1.0}),
    ],
    'Tile': [
        (1, {}),
        (6, {}),
        (13, {}),
    ],
    'TopK': [
        (1, {'axis': -1}),
        (10, {'axis': -1}),
        (11, {'axis': -1, 'largest': 1, 'sorted': 1}),
        (24, {'axis': -1, 'largest': 1, 'sorted': 1}),
    ],
    'Transpose': [
        (1, {}),
        (13, {}),
        (21, {}),
        (23, {}),
        (24, {}),
        (25, {}),
    ],
    'Trilu': [
        (14, {'upper': 1}),
    ],
    'Unsqueeze': [
        (1, {}),
        (11, {}),
        (13, {}),
        (21, {}),
        (23, {}),
        (24, {}),
        (25, {}),
    ],
    'Upsample': [
        (1, {'mode': 'nearest'}),
        (7, {'mode': 'nearest'}),
        (9, {'mode': 'nearest'}),
        (10, {'mode': 'nearest'}),
    ],
    'Where': [
        (9, {}),
        (16, {}),
    ],
    'Xor': [
        (1, {'broadcast': 0}),
        (7, {}),
    ],
}


def schema_defaults(op_type: str, domain: str, opset: int) -> dict | None:
    """The attribute defaults of ``op_type``'s schema at ``opset``; None when the table does not know it."""
    if domain not in ("", "ai.onnx"):
        return None
    found = None
    for since, defaults in DEFAULTS.get(op_type, ()):
        if since <= opset:
            found = defaults
    return found
