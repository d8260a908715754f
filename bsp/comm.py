"""The communicator of a process that is a world of one rank: what the run pipeline and the
engine ask of an mpi4py communicator, answered without MPI (importing this never imports
mpi4py)."""


class Solo:
    """One rank, rank 0: every collective returns what this rank gives."""
    rank = 0
    size = 1
    phase = None        # what the ranks are doing (bsp.mpi.Guarded's, for its messages)

    @staticmethod
    def bcast(obj, root=0):
        return obj

    @staticmethod
    def allgather(obj):
        return [obj]

    @staticmethod
    def gather(obj, root=0):
        return [obj]

    @staticmethod
    def allreduce(obj, op=None):
        return obj

    @staticmethod
    def Barrier():
        pass


SOLO = Solo()
