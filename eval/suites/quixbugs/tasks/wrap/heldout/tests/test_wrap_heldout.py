# From QuixBugs (MIT, James Koppel): python_testcases/test_wrap.py and json_testcases/wrap.json.
# Cases: lines 1, 3 (0-based) of json_testcases/wrap.json, as [args, expected].
import unittest

from wrap import wrap
from tests._timeout import case_time_limit

CASES = [
    [['The leaves did not stir on the trees, grasshoppers chirruped, and the monotonous hollow sound of the sea rising up from below, spoke of the peace, of the eternal sleep awaiting us. So it must have sounded when there was no Yalta, no Oreanda here; so it sounds now, and it will sound as indifferently and monotonously when we are all no more. And in this constancy, in this complete indifference to the life and death of each of us, there lies hid, perhaps, a pledge of our eternal salvation, of the unceasing movement of life upon earth, of unceasing progress towards perfection. Sitting beside a young woman who in the dawn seemed so lovely, soothed and spellbound in these magical surroundings - the sea, mountains, clouds, the open sky - Gurov thought how in reality everything is beautiful in this world when one reflects: everything except what we think or do ourselves when we forget our human dignity and the higher aims of our existence.', 20], ['The leaves did not', ' stir on the trees,', ' grasshoppers', ' chirruped, and the', ' monotonous hollow', ' sound of the sea', ' rising up from', ' below, spoke of the', ' peace, of the', ' eternal sleep', ' awaiting us. So it', ' must have sounded', ' when there was no', ' Yalta, no Oreanda', ' here; so it sounds', ' now, and it will', ' sound as', ' indifferently and', ' monotonously when', ' we are all no more.', ' And in this', ' constancy, in this', ' complete', ' indifference to the', ' life and death of', ' each of us, there', ' lies hid, perhaps,', ' a pledge of our', ' eternal salvation,', ' of the unceasing', ' movement of life', ' upon earth, of', ' unceasing progress', ' towards perfection.', ' Sitting beside a', ' young woman who in', ' the dawn seemed so', ' lovely, soothed and', ' spellbound in these', ' magical', ' surroundings - the', ' sea, mountains,', ' clouds, the open', ' sky - Gurov thought', ' how in reality', ' everything is', ' beautiful in this', ' world when one', ' reflects:', ' everything except', ' what we think or do', ' ourselves when we', ' forget our human', ' dignity and the', ' higher aims of our', ' existence.']],
    [['The leaves did not stir on the trees, grasshoppers chirruped, and the monotonous hollow sound of the sea rising up from below, spoke of the peace, of the eternal sleep awaiting us. So it must have sounded when there was no Yalta, no Oreanda here; so it sounds now, and it will sound as indifferently and monotonously when we are all no more. And in this constancy, in this complete indifference to the life and death of each of us, there lies hid, perhaps, a pledge of our eternal salvation, of the unceasing movement of life upon earth, of unceasing progress towards perfection. Sitting beside a young woman who in the dawn seemed so lovely, soothed and spellbound in these magical surroundings - the sea, mountains, clouds, the open sky - Gurov thought how in reality everything is beautiful in this world when one reflects: everything except what we think or do ourselves when we forget our human dignity and the higher aims of our existence.', 77], ['The leaves did not stir on the trees, grasshoppers chirruped, and the', ' monotonous hollow sound of the sea rising up from below, spoke of the peace,', ' of the eternal sleep awaiting us. So it must have sounded when there was no', ' Yalta, no Oreanda here; so it sounds now, and it will sound as indifferently', ' and monotonously when we are all no more. And in this constancy, in this', ' complete indifference to the life and death of each of us, there lies hid,', ' perhaps, a pledge of our eternal salvation, of the unceasing movement of', ' life upon earth, of unceasing progress towards perfection. Sitting beside a', ' young woman who in the dawn seemed so lovely, soothed and spellbound in', ' these magical surroundings - the sea, mountains, clouds, the open sky -', ' Gurov thought how in reality everything is beautiful in this world when one', ' reflects: everything except what we think or do ourselves when we forget our', ' human dignity and the higher aims of our existence.']],
]


class TestWrapHeldout(unittest.TestCase):
    def test_wrap_heldout(self):
        for i, (args, expected) in enumerate(CASES):
            with self.subTest(case=i):
                with case_time_limit():
                    result = wrap(*args)
                self.assertEqual(result, expected)


if __name__ == "__main__":
    unittest.main()
