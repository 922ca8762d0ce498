"""What runs inside the target pytest (Python >= 3.9, standard library only), and the protocol it shares."""
