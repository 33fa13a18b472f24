"""Qt-free data: MNIST on disk and the preprocessing of drawings and images."""
