"""Qt-free training: the event-generating loop and safetensors checkpoints."""
