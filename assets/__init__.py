"""Resources shipped with capsviz: the pretrained MNIST CapsNet and a sample of the MNIST test split."""
