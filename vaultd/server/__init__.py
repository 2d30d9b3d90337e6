"""The socket side: listening, accepting, sessions, dispatch and their bounds."""
