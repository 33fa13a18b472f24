"""The commands of ``capsviz``, one module each: :mod:`~capsviz.commands.train`,
:mod:`~capsviz.commands.eval`, :mod:`~capsviz.commands.trace`,
:mod:`~capsviz.commands.classify`, :mod:`~capsviz.commands.robustness`, and
:mod:`~capsviz.commands.app` (no command: the Qt app).

Each has ``add_parser(subparsers)``, which adds its subcommand with
``set_defaults(func=run)``, and ``run(args) -> int`` (the exit code). Building the parsers
imports no torch, torchvision or Qt (``capsviz --help`` and ``capsviz COMMAND --help``
answer at once); ``run`` imports what the command needs.
"""
