"""Infrastructure every part uses: paths and the environment, run settings, logging, atomic files, the registry type, the transcript's record types."""
