"""Resources shipped with capsviz: the pretrained CapsNets (MNIST, MultiMNIST), the baseline
CNNs compared with them, and a sample of the MNIST test split."""
