#include "traffic/transport/dcqcn_reaction_point.h"
