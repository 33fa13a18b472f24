"""The Qt application (PySide6, pyqtgraph, superqt). The only package that imports Qt."""
