"""The graph area of the window (``view.GraphView``) and its parts."""
