"""The short manual of the agent's tools, shown at the start of every episode."""

TOOL_HELP = """\
## Tools
Every step is one action:
- a plain string, or {"tool": "bash", "command": "..."}: run a bash command in a persistent
  shell (working directory, variables and background jobs carry over between steps). Each
  command has a time limit; long output is cut to its head and tail, and the whole output is
  kept in a log file under {logs_dir}.
- {"tool": "view", "path": "/abs/path", "view_range": [start, end]}: show a file with line
  numbers (view_range optional, end -1 = to the end), or list a directory.
- {"tool": "create", "path": "/abs/path", "file_text": "..."}: create a new file.
- {"tool": "str_replace", "path": "/abs/path", "old_str": "...", "new_str": "..."}: replace
  text that occurs exactly once in a file.
- {"tool": "insert", "path": "/abs/path", "insert_line": N, "new_str": "..."}: insert text
  after line N (0 = at the top).
- {"tool": "validate"}: check the format of {submission_path} (it does not reveal a score).
- {"tool": "submit"}: end the episode and grade {submission_path}.
The episode also ends when the step or time budget runs out; the submission present then is
graded.
"""
