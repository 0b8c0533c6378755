"""What a hook runs: the files and programs of its line, args or module
(`whatruns`), the words of its command line as the shell reads them (`cmdwords`), the
pins that stop a hook whose files changed since they were trusted (`pins`), the folders
programs outside the sandbox run from (`environments`), and where a hook's Python keeps
its byte code (`bytecode`)."""
