// Implementation lands with the samples-log commit.
