"""The GAMUT leaderboard application: config, project, pipeline, command line, Hub, pull-request
workflow steps, the submitters' model runner and the demo synthesiser, over the ``scoring`` engine
and the ``generator`` site."""
