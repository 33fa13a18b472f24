"""The views of the main window."""
