"""The daemon: the mail pipeline's stages and the scheduler that runs them."""
