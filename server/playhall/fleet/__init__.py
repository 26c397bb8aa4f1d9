"""A fleet of processes on one Redis: any process serves any room (see ``node``)."""
