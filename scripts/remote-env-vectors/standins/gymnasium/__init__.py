# Stand-in for gymnasium's Env base class only (gymnasium is not packaged by Debian 12): what
# TextCraftEnv uses of it is subscripting, reset(seed=) and close().
class Env:
    def __class_getitem__(cls, _):
        return cls
    def reset(self, seed=None, options=None):
        return None
    def close(self):
        return None
