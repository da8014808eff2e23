"""The script runtime: one run of one compiled script, wherever it executes.

``runner`` builds the globals and drives the script; ``toolproxy`` is the ``tools``
object a script calls; ``replies`` is the reply format between a run and its broker;
``result`` holds the values a run hands back. It uses the language layer and is
used by the executors.
"""
