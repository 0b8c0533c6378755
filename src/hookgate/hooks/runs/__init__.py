"""What a hook runs: the files and programs of its line, args or module
(`whatruns`), the words of its command line as the shell reads them (`cmdwords`), and
the pins that stop a hook whose files changed since they were trusted (`pins`)."""
