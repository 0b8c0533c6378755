"""What a session keeps on disk, under `$HOOKGATE_HOME` (`home`): its append-only
session file (`session`), held by one writer (`lock`), and the transcript hooks read
(`transcript`)."""
